import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shardIndexOf, shardLayout } from "../../src/cloudflare/shard-layout.js";
import { FakeProvider } from "../../src/testing/fake-provider.js";
import { EffectReceiver } from "../helpers/receiver.js";
import { SECRET, signWith } from "../http/helpers/webhooks.js";
import { type ShardedWorker, startShardedWorkers } from "./helpers/sharded-workers.js";

// Intents and discovery on a sharded Worker (issue 32): an intent's job lives on the job's shard
// only, once, whichever way it got there (attached through the API, matched by a discovery sweep,
// adopted untagged), and one cron run lists each provider instance once.

const SHARDS = 4;
const TIMEOUT_SECONDS = 0.3;

interface Overview {
  shards: { name: string; layout: string; stats: { jobsByState: Record<string, number> } | null }[];
  total: { jobsByState: Record<string, number>; effectsByStatus: Record<string, number> };
}

describe(`intents and discovery on ${SHARDS} shards`, () => {
  let worker: ShardedWorker;
  const receiver = new EffectReceiver(SECRET);
  const fake = new FakeProvider();
  beforeAll(async () => {
    await receiver.listen();
    await fake.listen();
    worker = await startShardedWorkers([
      {
        name: "v",
        config: {
          providers: {
            acme: {
              type: "generic",
              webhook: { secrets: [SECRET] },
              intentTimeoutSeconds: TIMEOUT_SECONDS,
              discover: { enabled: true, url: `${fake.url}/jobs?after={cursor}` },
            },
          },
          effects: [
            { name: "done", url: receiver.url, secret: SECRET, on: ["succeeded"] },
            { name: "orphans", url: receiver.url, secret: SECRET, on: ["orphaned"] },
          ],
          cloudflare: { shards: SHARDS },
          log: { level: "error" },
        },
      },
    ]);
  }, 120_000);
  afterAll(async () => {
    await worker?.dispose();
    await receiver.close();
    await fake.close();
  });

  const post = (path: string, body: unknown) =>
    worker.fetch("v", path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const json = async (path: string) =>
    (await (await worker.fetch("v", path)).json()) as Record<string, unknown>;
  const overview = async () => (await json("/v1/shards")) as unknown as Overview;
  const shardOf = (id: string) => shardLayout(SHARDS).names[shardIndexOf({ provider: "acme", id }, SHARDS)];
  /** Every job row on every object, by object name. */
  const rowsByShard = async () =>
    Object.fromEntries(
      (await overview()).shards.map((s) => [
        s.name,
        Object.values(s.stats?.jobsByState ?? {}).reduce((a, b) => a + b, 0),
      ]),
    );
  const expectedRows = (ids: string[]) => {
    const rows: Record<string, number> = Object.fromEntries(
      [...shardLayout(SHARDS).names, "ledger"].map((name) => [name, 0]),
    );
    for (const id of ids) rows[shardOf(id) as string] = (rows[shardOf(id) as string] ?? 0) + 1;
    return rows;
  };
  const deliveriesPerKey = () => {
    const perKey = new Map<string, number>();
    for (const d of receiver.deliveries) perKey.set(d.key, (perKey.get(d.key) ?? 0) + 1);
    return [...perKey.values()];
  };

  const attachedIds = ["remote-0", "remote-1", "remote-2", "remote-3", "remote-4"];

  it("attaching through the API registers the job on its shard only: readable at once, settled once, delivered once", async () => {
    // Ids on at least three different shards (a route to one shard would put some on the wrong one).
    expect(new Set(attachedIds.map(shardOf)).size).toBeGreaterThanOrEqual(3);
    for (const [i, id] of attachedIds.entries()) {
      expect((await post("/v1/intents", { provider: "acme", key: `k-${i}`, kind: "render" })).status).toBe(
        201,
      );
      const attached = await post(`/v1/intents/k-${i}/attach`, { id });
      expect(attached.status).toBe(200);
      expect(await attached.json()).toMatchObject({
        status: "attached",
        jobId: id,
        job: { id, kind: "render" },
      });
      // Readable right after the attach, from the job's shard.
      const job = await worker.fetch("v", `/v1/jobs/acme/${id}`);
      expect(job.status).toBe(200);
      expect(await job.json()).toMatchObject({ id, kind: "render", state: "pending" });
    }
    // The same id again changes nothing; another id is refused and registers nothing.
    const again = await post("/v1/intents/k-0/attach", { id: "remote-0" });
    expect(again.status).toBe(200);
    const other = await post("/v1/intents/k-0/attach", { id: "elsewhere-0" });
    expect(other.status).toBe(409);
    expect(other.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect((await worker.fetch("v", "/v1/jobs/acme/elsewhere-0")).status).toBe(404);

    for (const id of attachedIds) {
      const body = JSON.stringify({ jobId: id, state: "succeeded", seq: 1 });
      const answer = await worker.fetch("v", "/webhooks/acme", {
        method: "POST",
        headers: signWith(SECRET, body),
        body,
      });
      expect(answer.status).toBe(200);
    }
    await worker.scheduled("v");
    expect(await rowsByShard()).toEqual(expectedRows(attachedIds));
    const settlements = (await json("/v1/settlements")) as { items: { job: { id: string } }[] };
    expect(settlements.items.map((s) => s.job.id).sort()).toEqual([...attachedIds].sort());
    await receiver.until(() => receiver.applied.size === attachedIds.length);
    expect((await overview()).total.effectsByStatus).toEqual({ delivered: attachedIds.length });
    expect(deliveriesPerKey()).toEqual(attachedIds.map(() => 1));
  });

  it("reads and lists intents once each, attached, across shards", async () => {
    expect(await json("/v1/intents/k-3")).toMatchObject({ status: "attached", jobId: "remote-3" });
    const list = (await json("/v1/intents")) as { items: { key: string; status: string }[] };
    expect(list.items.map((i) => i.key).sort()).toEqual(attachedIds.map((_, i) => `k-${i}`));
    expect(new Set(list.items.map((i) => i.status))).toEqual(new Set(["attached"]));
    const limited = (await json("/v1/intents?limit=2")) as { items: { key: string }[] };
    expect(limited.items.map((i) => i.key)).toEqual(list.items.slice(0, 2).map((i) => i.key));
  });

  it("one cron run lists the provider once and adopts each listed job on its own shard, attaching tagged ones", async () => {
    for (const key of ["t-0", "t-1"])
      expect((await post("/v1/intents", { provider: "acme", key, kind: "upscale" })).status).toBe(201);
    const listed = Array.from({ length: 8 }, (_, i) => `listed-${i}`);
    for (const [i, id] of listed.entries())
      fake.addJob(id, [{ afterMs: 0, state: "succeeded" }], i < 2 ? { tag: `t-${i}` } : {});
    expect(new Set(listed.map(shardOf)).size).toBe(SHARDS);
    const before = { calls: fake.listCalls, delivered: receiver.applied.size };
    await worker.scheduled("v");
    // One page, one call: not one per ledger object.
    expect(fake.listCalls - before.calls).toBe(1);
    expect(await rowsByShard()).toEqual(expectedRows([...attachedIds, ...listed]));
    for (const key of ["t-0", "t-1"])
      expect(await json(`/v1/intents/${key}`)).toMatchObject({
        status: "attached",
        jobId: `listed-${key.slice(2)}`,
        attachedBy: "discovery",
      });
    expect(await json("/v1/jobs/acme/listed-1")).toMatchObject({ kind: "upscale", state: "succeeded" });
    // A second run lists again (from the stored mark) and changes nothing.
    await worker.scheduled("v");
    expect(await rowsByShard()).toEqual(expectedRows([...attachedIds, ...listed]));
    await receiver.until(() => receiver.applied.size === before.delivered + listed.length);
    const total = (await overview()).total.effectsByStatus;
    expect(total).toEqual({ delivered: attachedIds.length + listed.length });
    expect(deliveriesPerKey().filter((n) => n !== 1)).toEqual([]);
  });

  it("flags an intent that was never attached orphaned once, and delivers its alert once", async () => {
    expect((await post("/v1/intents", { provider: "acme", key: "lost" })).status).toBe(201);
    // The timeout is measured on the wall clock: only waiting it out makes the intent overdue.
    await new Promise((resolve) => setTimeout(resolve, TIMEOUT_SECONDS * 1000 + 200));
    await worker.scheduled("v");
    await worker.scheduled("v");
    expect(await json("/v1/intents/lost")).toMatchObject({ status: "orphaned" });
    await receiver.until(() => receiver.deliveries.some((d) => d.body.type === "intent.orphaned"));
    const alerts = receiver.deliveries.filter((d) => d.body.type === "intent.orphaned");
    expect(alerts.map((d) => d.body.job.id)).toEqual(["lost"]);
    // No intent that was attached (home or copy) was flagged.
    const orphaned = (await json("/v1/intents?status=orphaned")) as { items: { key: string }[] };
    expect(orphaned.items.map((i) => i.key)).toEqual(["lost"]);
  });
});
