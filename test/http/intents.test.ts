import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createApp } from "../../src/app/create-app.js";
import { parseConfig } from "../../src/config/load-config.js";
import type { Finality } from "../../src/engine/finality.js";
import { createIntentApi } from "../../src/engine/intent-api.js";
import { finalityFromConfig } from "../../src/host/node/finality-from-config.js";
import { createPromMetrics } from "../../src/http/prom-metrics.js";
import { createWebhookReceivers } from "../../src/providers/node-providers.js";
import { engineOf } from "../helpers/engine.js";
import { type TempDir, tempDir } from "../helpers/temp-dir.js";
import { ACME, webhookInit } from "./helpers/in-process.js";
import { SECRET, signWith } from "./helpers/webhooks.js";

// The intents API (a contract): POST /v1/intents, POST /v1/intents/:key/attach, GET /v1/intents/:key,
// on a SQLite file, called with app.request().

let dir: TempDir;
let finality: Finality;
let app: ReturnType<typeof createApp>;
let metrics: ReturnType<typeof createPromMetrics>;
beforeEach(async () => {
  dir = tempDir("finality-intents-http-");
  const config = parseConfig(
    {
      providers: { acme: { ...ACME, intentTimeoutSeconds: 60 } },
      intentTimeoutSeconds: 600,
      effects: [{ name: "orphans", url: "http://127.0.0.1:9/o", secret: SECRET, on: ["orphaned"] }],
    },
    {},
    { db: dir.file("ledger.db") },
  );
  finality = await finalityFromConfig(config);
  metrics = createPromMetrics({
    stats: () => engineOf(finality).store.stats(engineOf(finality).clock.now()),
    orphanedIntents: () => engineOf(finality).store.countOrphanedIntents(),
    processMetrics: false,
  });
  const logger = { info() {}, warn() {}, error() {} };
  app = createApp({
    finality,
    config,
    metrics,
    logger,
    receivers: createWebhookReceivers(config.providers, () => engineOf(finality).clock.now()),
  });
});
afterEach(async () => {
  await finality.close();
  dir.cleanup();
});

const post = (path: string, body: unknown) =>
  app.request(path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });

describe("intents over HTTP", () => {
  it("POST /v1/intents: 201 the intent, 200 the same again, 409 problem+json for another body", async () => {
    const body = { provider: "acme", key: "order-1", kind: "render", metadata: { user: 7 } };
    const created = await post("/v1/intents", body);
    expect(created.status).toBe(201);
    const intent = (await created.json()) as Record<string, unknown>;
    expect(intent).toMatchObject({
      key: "order-1",
      provider: "acme",
      status: "open",
      kind: "render",
      tag: "order-1",
    });
    expect(intent).not.toHaveProperty("jobId");
    expect(typeof intent.idempotencyKey).toBe("string");
    // The provider's own timeout (60 s), not the top-level one.
    expect(Date.parse(intent.deadlineAt as string) - Date.parse(intent.createdAt as string)).toBe(60_000);
    const again = await post("/v1/intents", body);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(intent);
    const other = await post("/v1/intents", { ...body, kind: "text" });
    expect(other.status).toBe(409);
    expect(other.headers.get("content-type")).toContain("application/problem+json");
    const fetched = await app.request("/v1/intents/order-1");
    expect(fetched.status).toBe(200);
    expect(await fetched.json()).toEqual(intent);
  });

  it("refuses bad input with problem+json and stores nothing", async () => {
    for (const bad of [
      "{not json",
      { provider: "acme" },
      { provider: "nope", key: "k" },
      { provider: "acme", key: "k", kidn: "x" },
      { provider: "acme", key: "k\u0001" },
    ]) {
      const answer = await post("/v1/intents", bad);
      expect(answer.status, JSON.stringify(bad)).toBeGreaterThanOrEqual(400);
      expect(answer.status).toBeLessThan(500);
      expect(answer.headers.get("content-type")).toContain("application/problem+json");
    }
    expect(await engineOf(finality).store.listIntents({})).toEqual([]);
    expect((await app.request("/v1/intents/k")).status).toBe(404);
    expect((await post("/v1/intents/k/attach", { id: "j" })).status).toBe(404);
    await post("/v1/intents", { provider: "acme", key: "k" });
    expect((await post("/v1/intents/k/attach", { ID: "j" })).status).toBe(400);
    expect((await post("/v1/intents/k/attach", { id: "" })).status).toBe(400);
    expect((await finality.listJobs()).items).toEqual([]);
  });

  it("attach: 200 with the job; the same id again is 200 and changes nothing; another id is 409", async () => {
    await post("/v1/intents", { provider: "acme", key: "order-2", kind: "render" });
    const attached = await post("/v1/intents/order-2/attach", { id: "remote-2" });
    expect(attached.status).toBe(200);
    const body = (await attached.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      key: "order-2",
      status: "attached",
      jobId: "remote-2",
      attachedBy: "api",
      job: { provider: "acme", id: "remote-2", kind: "render", registered: true },
    });
    const again = await post("/v1/intents/order-2/attach", { id: "remote-2" });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(body);
    expect((await post("/v1/intents/order-2/attach", { id: "remote-3" })).status).toBe(409);
    expect(await (await app.request("/v1/intents/order-2")).json()).toMatchObject({
      key: "order-2",
      provider: "acme",
      status: "attached",
      jobId: "remote-2",
    });
  });

  it("a webhook that adopted the job before the attach: one job, the webhook's state kept, the kind added", async () => {
    await post("/v1/intents", { provider: "acme", key: "order-3", kind: "render", metadata: { n: 1 } });
    const payload = JSON.stringify({ jobId: "remote-3", state: "succeeded" });
    const hook = await app.request(
      "/webhooks/acme",
      webhookInit(payload, signWith(SECRET, payload, { id: "m1" })),
    );
    expect(hook.status).toBe(200);
    const attached = await post("/v1/intents/order-3/attach", { id: "remote-3" });
    expect(await attached.json()).toMatchObject({
      status: "attached",
      job: { id: "remote-3", state: "succeeded", kind: "render", metadata: { n: 1 }, registered: true },
    });
    const jobs = await finality.listJobs({ provider: "acme" });
    expect(jobs.items.map((j) => j.id)).toEqual(["remote-3"]);
    const events = await finality.jobEvents({ provider: "acme", id: "remote-3" });
    expect(events.map((e) => e.source)).toEqual(["webhook", "intent"]);
  });

  it("an orphaned intent shows in GET, in the list and in finality_intents_orphaned", async () => {
    await post("/v1/intents", { provider: "acme", key: "order-4" });
    const deadline = (await finality.getIntent("order-4"))?.deadlineAt ?? 0;
    // The scan at the deadline, on the ledger's own store and effects, with a clock that is there.
    const api = createIntentApi({
      store: engineOf(finality).store,
      clock: { now: () => deadline },
      newId: () => "effect-1",
      effects: engineOf(finality).effects,
      contextFor: engineOf(finality).contextFor,
      intentTimeoutSeconds: () => 60,
      announceEffects() {},
    });
    expect((await api.flagOrphanedIntents()).map((i) => i.key)).toEqual(["order-4"]);
    expect(await (await app.request("/v1/intents/order-4")).json()).toMatchObject({ status: "orphaned" });
    const list = (await (await app.request("/v1/intents?status=orphaned")).json()) as {
      items: { key: string }[];
    };
    expect(list.items.map((i) => i.key)).toEqual(["order-4"]);
    const page = await app.request("/intents");
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("Orphaned (1)");
    expect(html).toContain('data-intent="order-4"');
    const scraped = (await metrics.render()).body;
    expect(scraped).toMatch(/^finality_intents_orphaned 1$/m);
    const effects = await engineOf(finality).store.listEffects({ provider: "acme" });
    expect(effects.items.map((e) => `${e.name}:${e.trigger}:${e.jobId}`)).toEqual([
      "orphans:orphaned:order-4",
    ]);
  });
});
