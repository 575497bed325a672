import { afterAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app/create-app.js";
import { parseConfig } from "../../src/config/load-config.js";
import { finalityFromConfig } from "../../src/host/node/finality-from-config.js";
import { createWebhookReceivers } from "../../src/providers/node-providers.js";
import { createRunService } from "../../src/runs/run-service.js";
import { SECRET, signWith } from "./helpers/webhooks.js";

// One body-limit layer (http/body-limit.ts): `server.bodyLimitBytes` reaches every route that
// reads a body through it, none by its own parameter. Each route below answers 413 to a body one
// byte over the limit and does not to one at the limit.

const LIMIT = 2048;

describe("server.bodyLimitBytes, applied once for every route with a body", async () => {
  const config = parseConfig(
    {
      server: { bodyLimitBytes: LIMIT, bodyBytesInFlight: LIMIT * 4 },
      providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } },
      workers: { pools: {} },
    },
    {},
    { db: ":memory:" },
  );
  const finality = await finalityFromConfig(config);
  afterAll(() => finality.close());
  const app = createApp({
    finality,
    runs: createRunService({ finality }),
    config,
    receivers: createWebhookReceivers(config.providers, () => Date.now()),
  });

  /** A JSON object of exactly `size` bytes: `{"pad":"xxx…"}`. */
  const bodyOf = (size: number) => `{"pad":"${"x".repeat(size - 10)}"}`;

  const routes: [string, Record<string, string>][] = [
    ["/webhooks/acme", {}],
    ["/v1/jobs", {}],
    ["/v1/jobs/acme/j1/observations", {}],
    ["/v1/intents", {}],
    ["/v1/intents/k1/attach", {}],
    ["/v1/runs", {}],
    ["/v1/runs/r1/cancel", {}],
    ["/v1/workers/w1/claim", {}],
    ["/v1/attempts/a1/heartbeat", {}],
    ["/v1/attempts/a1/events", {}],
  ];

  it.each(routes)("POST %s: 413 one byte over the limit, not at it", async (path) => {
    const post = (body: string) =>
      app.request(path, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(path.startsWith("/webhooks/") ? signWith(SECRET, body) : {}),
        },
        body,
      });
    expect(bodyOf(LIMIT + 1)).toHaveLength(LIMIT + 1);
    const over = await post(bodyOf(LIMIT + 1));
    expect(over.status).toBe(413);
    expect(await over.json()).toMatchObject({ code: "payload-too-large" });
    const at = await post(bodyOf(LIMIT));
    expect(at.status).not.toBe(413);
    expect(at.status).toBeLessThan(500);
  });
});
