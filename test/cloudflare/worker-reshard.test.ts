import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shardLayout } from "../../src/cloudflare/shard-layout.js";
import { EffectReceiver } from "../helpers/receiver.js";
import { SECRET } from "../http/helpers/webhooks.js";
import { counts, everyRow, page } from "./helpers/dashboard-html.js";
import { allPages, finalStateOf, inParallel, shuffled, webhookLoad } from "./helpers/shard-load.js";
import { type ShardedWorker, startShardedWorkers } from "./helpers/sharded-workers.js";

const JOBS = 500;
const load = webhookLoad(JOBS, 24);

/**
 * Resharding 2 → 4 while webhooks keep coming, as a deploy rolls out: first only the old Worker
 * (2 shards) is deployed, then both answer at random (Cloudflare moves traffic over gradually),
 * then only the new one (`shards: 4, previousShards: 2`). A webhook the old Worker cannot place
 * any more (its shard was retired by the new one) gets a 5xx, and its sender retries it, landing
 * on the new Worker as a provider's retry eventually would.
 */
describe("resharding from 2 to 4 under load", () => {
  const receiver = new EffectReceiver(SECRET);
  let worker: ShardedWorker;
  const statuses: Record<"old" | "new" | "retried", number[]> = { old: [], new: [], retried: [] };
  beforeAll(async () => {
    await receiver.listen();
    const base = {
      providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } },
      effects: [{ name: "notify", url: receiver.url, secret: SECRET, on: ["succeeded", "failed"] }],
      log: { level: "error" },
    };
    worker = await startShardedWorkers([
      { name: "two", config: { ...base, cloudflare: { shards: 2 } } },
      { name: "four", config: { ...base, cloudflare: { shards: 4, previousShards: 2 } } },
    ]);
    const rollout = shuffled(
      load.map((_, i) => i),
      7,
    );
    const versionOf = (index: number): "two" | "four" => {
      if (index < load.length * 0.4) return "two";
      if (index >= load.length * 0.7) return "four";
      return (rollout[index] as number) % 2 === 0 ? "two" : "four";
    };
    await inParallel(load, 64, async (webhook, index) => {
      const send = (version: string) =>
        worker.fetch(version, "/webhooks/acme", {
          method: "POST",
          headers: webhook.headers,
          body: webhook.body,
        });
      const version = versionOf(index);
      const first = await send(version);
      await first.arrayBuffer();
      statuses[version === "two" ? "old" : "new"].push(first.status);
      if (first.status >= 500) {
        const retry = await send("four");
        await retry.arrayBuffer();
        statuses.retried.push(retry.status);
      }
    });
  }, 600_000);
  afterAll(async () => {
    await worker?.dispose();
    await receiver.close();
  });

  it("takes every webhook: the old Worker's refusals are all retried and taken by the new one", () => {
    expect(statuses.new.filter((s) => s !== 200)).toEqual([]);
    expect(statuses.retried.filter((s) => s !== 200)).toEqual([]);
    // The fence did engage: the old Worker was refused on shards the new one had retired.
    expect(statuses.old.filter((s) => s === 503).length).toBeGreaterThan(0);
    expect(statuses.old.filter((s) => s !== 200 && s !== 503)).toEqual([]);
  });

  it("loses no job and holds none twice, each in its final state", async () => {
    const jobs = await allPages((p) => worker.fetch("four", p), "/v1/jobs?provider=acme", 100);
    const ids = jobs.map((j) => String(j.id));
    expect(ids.length - new Set(ids).size).toBe(0);
    expect(new Set(ids).size).toBe(JOBS);
    for (const job of jobs) expect(job.state, String(job.id)).toBe(finalStateOf(String(job.id)));
    const overview = (await (await worker.fetch("four", "/v1/shards")).json()) as {
      shards: { name: string; layout: string; stats: { jobsByState: Record<string, number> } }[];
      total: { jobsByState: Record<string, number> };
    };
    const held = (s: { stats: { jobsByState: Record<string, number> } }) =>
      Object.values(s.stats.jobsByState).reduce((a, b) => a + b, 0);
    expect(overview.shards.map((s) => [s.name, s.layout])).toEqual([
      ...shardLayout(4).names.map((n) => [n, "current"]),
      ...shardLayout(2).names.map((n) => [n, "previous"]),
      ["ledger", "runs"],
    ]);
    expect(overview.shards.reduce((n, s) => n + held(s), 0)).toBe(JOBS);
    // Both layouts hold jobs: the old one what was first seen before the switch, the new one the rest.
    for (const layout of ["current", "previous"])
      expect(
        overview.shards.filter((s) => s.layout === layout).reduce((n, s) => n + held(s), 0),
      ).toBeGreaterThan(0);
  });

  it("shows both layouts' jobs on the new Worker's dashboard, each once, and counts them all", async () => {
    const jobs = await everyRow(worker, "/jobs?provider=acme&limit=100", "data-job", "next-page", "four");
    expect(jobs.rows).toHaveLength(JOBS);
    expect(new Set(jobs.rows).size).toBe(JOBS);
    const cards = counts(await page(worker, "/", "four"));
    const failed = Array.from({ length: JOBS }, (_, i) => i).filter((i) => i % 7 === 0).length;
    expect([cards["state-failed"], cards["state-succeeded"]]).toEqual([failed, JOBS - failed]);
  });

  it("delivers each settled job's effect once per key, from whichever layout holds the job", async () => {
    await receiver.until(() => receiver.applied.size === JOBS);
    const perKey = new Map<string, number>();
    for (const delivery of receiver.deliveries) perKey.set(delivery.key, (perKey.get(delivery.key) ?? 0) + 1);
    expect([...perKey.values()].filter((n) => n !== 1)).toEqual([]);
  });

  it("runs the cron on both layouts' shards while the old one drains", async () => {
    await worker.scheduled("four");
    const text = await (await worker.fetch("four", "/metrics")).text();
    expect(text.match(/^finality_shard_up\{.*layout="previous"\} 1$/gm)).toHaveLength(2);
    expect(text.match(/^finality_shard_up\{.*layout="current"\} 1$/gm)).toHaveLength(4);
  });

  it("keeps refusing the old Worker on a retired shard, with a retryable problem", async () => {
    const webhook = load[0];
    if (webhook === undefined) throw new Error("no load");
    const response = await worker.fetch("two", "/webhooks/acme", {
      method: "POST",
      headers: webhook.headers,
      body: webhook.body,
    });
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("5");
    expect(await response.json()).toMatchObject({ code: "store-unavailable" });
  });
});
