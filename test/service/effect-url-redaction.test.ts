import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as delay } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EffectReceiver } from "../helpers/receiver.js";
import { runCli, startService, tempDir } from "../http/helpers/service.js";
import { sendWebhook } from "../http/helpers/webhooks.js";
import { api, SECRET } from "./service-helpers.js";

// Slack-style: the credential is the path, or a query parameter. Each secret says SECRET.
const SECRET_PATH = "/services/T0SECRETA/B0SECRETB/xoxSECRETC";
const SECRET_QUERY = "?token=tokSECRETD";

interface EffectJson {
  name: string;
  status: string;
  lastError: string | null;
}

describe("effect URLs with a secret, configured as env:NAME, through `finality serve`", () => {
  const dir = tempDir();
  const receiver = new EffectReceiver();
  beforeAll(() => receiver.listen());
  afterAll(async () => {
    await receiver.close();
    dir.cleanup();
  });

  it("never appear in last_error, /v1/effects, the dashboard's effect pages, the CLI or the logs", async () => {
    receiver.decide = () => 503;
    const origin = new URL(receiver.url).origin;
    const refusing = `${origin}${SECRET_PATH}${SECRET_QUERY}`;
    // A port that refuses connections (bound, then closed): the transport's own error names it.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const closedPort = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const unreachable = `http://127.0.0.1:${closedPort}${SECRET_PATH}?key=keySECRETE`;
    const db = dir.file("ledger.db");
    const config = {
      providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } },
      effects: [
        { name: "slack", url: "env:SLACK_HOOK_URL", secret: SECRET },
        { name: "pager", url: "env:PAGER_HOOK_URL", secret: SECRET },
      ],
      effectDelivery: { maxAttempts: 1, timeoutSeconds: 2 },
    };
    const file = dir.file("config.json");
    writeFileSync(file, JSON.stringify(config));
    const service = await startService({
      db,
      args: ["--config", file],
      env: { SLACK_HOOK_URL: refusing, PAGER_HOOK_URL: unreachable },
    });
    try {
      expect((await sendWebhook(service.url, "acme", { jobId: "j1", state: "succeeded" })).status).toBe(200);
      await receiver.until(() => receiver.deliveries.length === 1);
      // The receiver did get the whole URL: the secret is sent, only never shown.
      expect(receiver.deliveries.map((d) => d.path)).toEqual([`${SECRET_PATH}${SECRET_QUERY}`]);
      let effects: EffectJson[] = [];
      for (let polls = 0; polls < 200; polls++) {
        effects = (await api<{ items: EffectJson[] }>(`${service.url}/v1/effects?job=j1`)).body.items;
        if (effects.length === 2 && effects.every((effect) => effect.status === "dead")) break;
        await delay(50);
      }
      const byName = Object.fromEntries(effects.map((effect) => [effect.name, effect.lastError]));
      expect(byName).toEqual({
        slack: `POST ${origin} answered 503`,
        pager: expect.stringMatching(
          new RegExp(`^POST http://127\\.0\\.0\\.1:${closedPort} failed: .*ECONNREFUSED`),
        ),
      });

      const shown = {
        api: JSON.stringify(effects),
        effectsPage: await (await fetch(`${service.url}/effects`)).text(),
        deadPage: await (await fetch(`${service.url}/effects?status=dead`)).text(),
        jobPage: await (await fetch(`${service.url}/jobs/acme/j1`)).text(),
      };
      expect(shown.effectsPage).toContain(`POST ${origin} answered 503`);
      expect(shown.jobPage).toContain(`POST ${origin} answered 503`);
      const cli = await runCli(["effects", "list", "--db", db]);
      expect(cli.code).toBe(0);
      expect(cli.stdout).toContain(origin);
      for (const [where, text] of Object.entries({ ...shown, cli: cli.stdout + cli.stderr }))
        expect({ where, secret: /SECRET/.exec(text)?.[0] ?? null }).toEqual({ where, secret: null });
    } finally {
      await service.stop();
    }
    // The log: the service warned about both failed deliveries, and named no secret.
    const log = service.stdout() + service.stderr();
    expect(log).toContain("effect not delivered");
    expect(log).toContain(origin);
    expect(log).not.toMatch(/SECRET/);
  });
});
