import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createApp } from "../../src/app/create-app.js";
import { createFinalityClient, FinalityClientError } from "../../src/client/index.js";
import { parseConfig } from "../../src/config/load-config.js";
import type { Finality } from "../../src/engine/finality.js";
import { finalityFromConfig } from "../../src/host/node/finality-from-config.js";
import { createWebhookReceivers } from "../../src/providers/node-providers.js";
import { engineOf } from "../helpers/engine.js";
import { ACME, webhookInit } from "./helpers/in-process.js";
import { SECRET, signWith } from "./helpers/webhooks.js";

// `GET /v1/jobs/{provider}/{id}?wait=N` and the client's `waitForJob` over it, in process
// (app.request, no port), on SQLite. A waiting request is answered by the settling webhook's
// commit; the header says whether the job settled.

type App = ReturnType<typeof createApp>;
let finality: Finality;
let app: App;
let shutdown: AbortController;

beforeEach(async () => {
  const config = parseConfig({ providers: { acme: ACME } }, {}, { db: ":memory:" });
  finality = await finalityFromConfig(config);
  const receivers = createWebhookReceivers(config.providers, () => engineOf(finality).clock.now());
  shutdown = new AbortController();
  app = createApp({ finality, config, receivers, shutdown: shutdown.signal });
});
afterEach(async () => {
  shutdown.abort();
  await finality.close();
});

let deliveries = 0;
async function webhook(id: string, state: string) {
  const body = JSON.stringify({ jobId: id, state, result: { id } });
  const response = await app.request(
    "/webhooks/acme",
    webhookInit(body, signWith(SECRET, body, { id: `w-${++deliveries}` })),
  );
  expect(response.status).toBe(200);
}
const getJob = async (path: string) => {
  const response = await app.request(path);
  return {
    status: response.status,
    settled: response.headers.get("finality-settled"),
    body: (await response.json()) as Record<string, unknown>,
  };
};
/** Resolves once the job has a watch: the waiting request has read it open and now waits. */
const watching = () => expect.poll(() => engineOf(finality).jobWaiters.watched()).toBe(1);

describe("GET /v1/jobs/{provider}/{id}?wait=N", () => {
  it("answers when the job settles, woken by the commit, with Finality-Settled: true", async () => {
    await webhook("j/1", "running");
    let answeredAt = 0;
    const waiting = getJob("/v1/jobs/acme/j%2F1?wait=60").then((answer) => {
      answeredAt = performance.now();
      return answer;
    });
    await watching();
    await webhook("j/1", "succeeded");
    const committedAt = performance.now();
    const answer = await waiting;
    // The fallback poll (1 s) would answer anywhere in the next second: only the commit is this quick.
    expect(answeredAt - committedAt).toBeLessThan(100);
    expect(answer).toMatchObject({ status: 200, settled: "true", body: { id: "j/1", state: "succeeded" } });
    // Settled already: at once, same header.
    expect(await getJob("/v1/jobs/acme/j%2F1?wait=60")).toMatchObject({ settled: "true" });
  });

  it("answers the open job at the deadline with Finality-Settled: false; without wait, no header", async () => {
    await webhook("slow", "running");
    const answer = await getJob("/v1/jobs/acme/slow?wait=1");
    expect(answer).toMatchObject({ status: 200, settled: "false", body: { state: "running" } });
    expect((await getJob("/v1/jobs/acme/slow")).settled).toBeNull();
    expect(engineOf(finality).jobWaiters.watched()).toBe(0);
  });

  it("refuses a bad wait with problem+json naming the field; an unknown job is 404 at once", async () => {
    await webhook("x", "running");
    for (const query of ["?wait=61", "?wait=-1", "?wait=soon", "?colour=red"]) {
      const response = await app.request(`/v1/jobs/acme/x${query}`);
      expect(response.status, query).toBe(400);
      expect(response.headers.get("content-type"), query).toContain("application/problem+json");
    }
    const missing = await app.request("/v1/jobs/acme/nobody?wait=60");
    expect(missing.status).toBe(404);
  });

  it("a server shutting down answers its waiting requests at once", async () => {
    await webhook("held", "running");
    const waiting = getJob("/v1/jobs/acme/held?wait=60");
    await watching();
    shutdown.abort();
    expect(await waiting).toMatchObject({ status: 200, settled: "false" });
  });
});

describe("client.waitForJob", () => {
  const client = () =>
    createFinalityClient({
      baseUrl: "http://127.0.0.1:8787",
      fetch: async (url, init) => app.request(String(url), init),
    });

  it("resolves with the settled job", async () => {
    await webhook("c1", "running");
    const waiting = client().waitForJob("acme", "c1", { timeoutMs: 30_000 });
    await watching();
    await webhook("c1", "failed");
    expect(await waiting).toMatchObject({ id: "c1", state: "failed" });
  });

  it("throws a retryable wait-timeout error when its total deadline passes, and any call's failure as it is", async () => {
    await webhook("c2", "running");
    const error = await client()
      .waitForJob("acme", "c2", { timeoutMs: 1_200 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FinalityClientError);
    expect(error).toMatchObject({ kind: "wait-timeout", retryable: true });
    const missing = await client()
      .waitForJob("acme", "none", { timeoutMs: 5_000 })
      .catch((e: unknown) => e);
    expect(missing).toMatchObject({ kind: "http", status: 404 });
  });
});
