import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shardIndexOf } from "../../src/cloudflare/shard-layout.js";
import { FakeProvider } from "../../src/testing/fake-provider.js";
import { EffectReceiver } from "../helpers/receiver.js";
import { OTHER_SECRET, SECRET, signWith } from "../http/helpers/webhooks.js";
import { type ShardedWorker, startShardedWorkers } from "./helpers/sharded-workers.js";

// `finality serve`'s counters on a sharded Worker (src/cloudflare/durable-counters.ts): kept in
// each ledger object's storage, summed over the shards at /metrics, and still there after every
// object restarts (a new workerd on the same persisted storage, as after an eviction).

const SHARDS = 4;
const WEBHOOK_JOBS = 24;
const POLLED_JOBS = 8;

/** Every sample of `name` with the given labels, summed (the Worker answers one per label set). */
function counter(text: string, name: string, labels: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${name}${labels} `));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1));
}

describe("durable counters at /metrics on a sharded Worker", () => {
  const fake = new FakeProvider();
  const receiver = new EffectReceiver(SECRET);
  let dir: string;
  let worker: ShardedWorker | null = null;
  let config: Record<string, unknown>;
  const start = async () => {
    worker = await startShardedWorkers([{ name: "v", config }], {}, { persist: dir });
    return worker;
  };
  const metrics = async (w: ShardedWorker) => {
    const response = await w.fetch("v", "/metrics");
    expect(response.status).toBe(200);
    return response.text();
  };
  let sent = 0;
  const webhook = async (w: ShardedWorker, id: string, secret = SECRET) => {
    const body = JSON.stringify({ jobId: id, state: "succeeded", result: { id } });
    const response = await w.fetch("v", "/webhooks/acme", {
      method: "POST",
      headers: signWith(secret, body, { id: `counted-${++sent}` }),
      body,
    });
    await response.arrayBuffer();
    return response.status;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "shards-feed-counters-"));
    await fake.listen();
    await receiver.listen();
    config = {
      providers: {
        acme: { type: "generic", webhook: { secrets: [SECRET] }, poll: { url: `${fake.url}/jobs/{id}` } },
      },
      reconcile: { graceSeconds: 0.001, minIntervalSeconds: 0.001, maxIntervalSeconds: 60 },
      effects: [{ name: "notify", url: receiver.url, secret: SECRET, on: ["succeeded"] }],
      cloudflare: { shards: SHARDS },
      log: { level: "error" },
    };
  });
  afterAll(async () => {
    await worker?.dispose();
    await fake.close();
    await receiver.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("counts webhooks, polls and effect attempts over every shard, and keeps them across a restart", async () => {
    const first = await start();
    const ids = Array.from({ length: WEBHOOK_JOBS }, (_, i) => `hook-${i}`);
    // The jobs are spread over every shard, so the sums below take each shard's part.
    expect(new Set(ids.map((id) => shardIndexOf({ provider: "acme", id }, SHARDS))).size).toBe(SHARDS);
    for (const id of ids) expect(await webhook(first, id)).toBe(200);
    for (let i = 0; i < 3; i++) expect(await webhook(first, `forged-${i}`, OTHER_SECRET)).toBe(401);
    for (let i = 0; i < POLLED_JOBS; i++) {
      fake.addJob(`polled-${i}`, [{ afterMs: 0, state: "succeeded", result: { i } }]);
      const registered = await first.fetch("v", "/v1/jobs", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ provider: "acme", id: `polled-${i}` }),
      });
      expect(registered.status).toBeLessThan(300);
      await registered.arrayBuffer();
    }
    await first.scheduled("v");
    const settled = WEBHOOK_JOBS + POLLED_JOBS;
    await receiver.until(() => receiver.applied.size === settled);
    // An attempt is counted once its answer is back, just after the receiver saw it.
    let text = await metrics(first);
    for (
      let i = 0;
      i < 50 && counter(text, "finality_effect_attempts_total", '{outcome="delivered"}') < settled;
      i++
    )
      text = await metrics(first);

    const applied = '{provider="acme",outcome="applied"}';
    expect(counter(text, "finality_webhooks_received_total", applied)).toBe(WEBHOOK_JOBS);
    expect(
      counter(text, "finality_webhooks_received_total", '{provider="acme",outcome="signature-invalid"}'),
    ).toBe(3);
    expect(counter(text, "finality_polls_total", '{provider="acme",outcome="observed"}')).toBe(POLLED_JOBS);
    expect(counter(text, "finality_effect_attempts_total", '{outcome="delivered"}')).toBe(settled);
    expect(counter(text, "finality_events_applied_total", '{source="webhook"}')).toBe(WEBHOOK_JOBS);
    expect(text).toContain("# TYPE finality_webhooks_received_total counter");
    // Each name once (one HELP and TYPE), however many shards hold it.
    expect(text.split("\n").filter((l) => l === "# TYPE finality_polls_total counter")).toHaveLength(1);

    // Every object restarts: a new workerd on the same storage.
    await first.dispose();
    worker = null;
    const second = await start();
    const after = await metrics(second);
    for (const [name, labels] of [
      ["finality_webhooks_received_total", applied],
      ["finality_polls_total", '{provider="acme",outcome="observed"}'],
      ["finality_effect_attempts_total", '{outcome="delivered"}'],
    ] as const)
      expect(counter(after, name, labels), name).toBe(counter(text, name, labels));
    // And they go on from there.
    for (let i = 0; i < 5; i++) expect(await webhook(second, `later-${i}`)).toBe(200);
    expect(counter(await metrics(second), "finality_webhooks_received_total", applied)).toBe(
      WEBHOOK_JOBS + 5,
    );
  }, 180_000);
});
