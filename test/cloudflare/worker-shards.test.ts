import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shardIndexOf, shardLayout } from "../../src/cloudflare/shard-layout.js";
import { EffectReceiver } from "../helpers/receiver.js";
import { SECRET, signWith } from "../http/helpers/webhooks.js";
import { allPages, finalStateOf, inParallel, webhookLoad } from "./helpers/shard-load.js";
import { type ShardedWorker, startShardedWorkers } from "./helpers/sharded-workers.js";

const JOBS = 500;
const SHARDS = 4;
const load = webhookLoad(JOBS, 21);

function configWith(receiver: EffectReceiver, shards: number) {
  return {
    providers: {
      acme: { type: "generic", webhook: { secrets: [SECRET] } },
      strict: { type: "generic", webhook: { secrets: [SECRET] }, unknownJobs: "registered-only" },
    },
    effects: [{ name: "notify", url: receiver.url, secret: SECRET, on: ["succeeded", "failed"] }],
    cloudflare: { shards, effectsPerRun: 100 },
    log: { level: "error" },
  };
}

interface Deployment {
  worker: ShardedWorker;
  receiver: EffectReceiver;
  answers: number[];
}

async function deploy(shards: number): Promise<Deployment> {
  const receiver = new EffectReceiver(SECRET);
  await receiver.listen();
  const worker = await startShardedWorkers([{ name: "v", config: configWith(receiver, shards) }]);
  const answers: number[] = [];
  await inParallel(load, 64, async (webhook) => {
    const response = await worker.fetch("v", "/webhooks/acme", {
      method: "POST",
      headers: webhook.headers,
      body: webhook.body,
    });
    answers.push(response.status);
    await response.arrayBuffer();
  });
  return { worker, receiver, answers };
}

const overviewOf = async (d: Deployment) =>
  (await (await d.worker.fetch("v", "/v1/shards")).json()) as {
    shards: {
      name: string;
      layout: string;
      stats: { jobsByState: Record<string, number> } | null;
      error: string | null;
    }[];
    total: { jobsByState: Record<string, number>; effectsByStatus: Record<string, number>; openJobs: number };
    complete: boolean;
  };

/**
 * What a client sees of a job, minus the times (two runs settle at different instants) and the
 * version (how many of the shuffled webhooks applied depends on the order they raced in).
 */
const visible = (job: Record<string, unknown>) => ({
  provider: job.provider,
  id: job.id,
  state: job.state,
  settledBy: job.settledBy,
  result: job.result,
});

describe("the shard of a job", () => {
  it("is pinned: the hash of a key never changes (existing deployments' jobs must stay findable)", () => {
    // Golden values, computed apart from the code (FNV-1a by hand in Python): changing the hash
    // strands every job of every sharded deployment.
    const keys = ["job-0", "job-1", "job-2", "job-3", "a/b", "ü"].map((id) =>
      shardIndexOf({ provider: "acme", id }, 4),
    );
    expect(keys).toEqual([1, 2, 3, 0, 1, 2]);
    expect(shardIndexOf({ provider: "acme", id: "anything" }, 1)).toBe(0);
    expect(shardLayout(1).names).toEqual(["ledger"]);
    expect(shardLayout(4).names).toEqual([
      "ledger-0-of-4",
      "ledger-1-of-4",
      "ledger-2-of-4",
      "ledger-3-of-4",
    ]);
  });
});

describe(`${JOBS} jobs, ${load.length} shuffled and duplicated signed webhooks`, () => {
  let four: Deployment;
  let one: Deployment;
  beforeAll(async () => {
    four = await deploy(SHARDS);
    one = await deploy(1);
  }, 600_000);
  afterAll(async () => {
    for (const d of [four, one]) {
      await d?.worker.dispose();
      await d?.receiver.close();
    }
  });

  it("are all taken (200), on 4 shards and on 1", () => {
    expect(load).toHaveLength(4 * JOBS);
    expect(four.answers.filter((s) => s !== 200)).toEqual([]);
    expect(one.answers.filter((s) => s !== 200)).toEqual([]);
  });

  it("end in the right states on the right shards", async () => {
    const expected = new Map<string, Record<string, number>>();
    for (const name of shardLayout(SHARDS).names) expected.set(name, {});
    for (let i = 0; i < JOBS; i++) {
      const id = `job-${i}`;
      const name = shardLayout(SHARDS).names[shardIndexOf({ provider: "acme", id }, SHARDS)] as string;
      const counts = expected.get(name) as Record<string, number>;
      counts[finalStateOf(id)] = (counts[finalStateOf(id)] ?? 0) + 1;
    }
    const overview = await overviewOf(four);
    expect(overview.complete).toBe(true);
    const runsHome = overview.shards.filter((s) => s.layout === "runs");
    expect(runsHome.map((s) => [s.name, s.stats?.jobsByState])).toEqual([["ledger", {}]]);
    for (const shard of overview.shards.filter((s) => s.layout === "current")) {
      expect(shard.stats?.jobsByState, shard.name).toEqual(expected.get(shard.name));
      // Every shard got a fair part (a hash that sent all to one would pass the rest).
      const held = Object.values(shard.stats?.jobsByState ?? {}).reduce((a, b) => a + b, 0);
      expect(held).toBeGreaterThan(JOBS / SHARDS / 2);
    }
    const jobs = await allPages((p) => four.worker.fetch("v", p), "/v1/jobs?provider=acme", 37);
    expect(new Set(jobs.map((j) => j.id)).size).toBe(JOBS);
    expect(jobs).toHaveLength(JOBS);
    for (const job of jobs) expect(job.state, String(job.id)).toBe(finalStateOf(String(job.id)));
  });

  it("deliver every settled job's effect once per key", async () => {
    for (const d of [four, one]) {
      await d.receiver.until(() => d.receiver.applied.size === JOBS);
      // Delivered, and recorded so: the ledgers hold nothing more to send.
      let delivered = 0;
      while (delivered < JOBS) delivered = (await overviewOf(d)).total.effectsByStatus.delivered ?? 0;
      expect(delivered).toBe(JOBS);
      const perKey = new Map<string, number>();
      for (const delivery of d.receiver.deliveries)
        perKey.set(delivery.key, (perKey.get(delivery.key) ?? 0) + 1);
      expect(perKey.size).toBe(JOBS);
      expect([...perKey.values()].filter((n) => n !== 1)).toEqual([]);
    }
  });

  it("list and overview as a single-shard run of the same load does", async () => {
    const byKey = (items: Record<string, unknown>[]) =>
      items.map(visible).sort((a, b) => (String(a.id) < String(b.id) ? -1 : 1));
    const [onFour, onOne] = await Promise.all(
      [four, one].map((d) => allPages((p) => d.worker.fetch("v", p), "/v1/jobs", 50)),
    );
    expect(byKey(onFour as Record<string, unknown>[])).toEqual(byKey(onOne as Record<string, unknown>[]));
    const effects = await Promise.all(
      [four, one].map((d) => allPages((p) => d.worker.fetch("v", p), "/v1/effects", 64)),
    );
    expect(effects[0]).toHaveLength(JOBS);
    expect(new Set(effects[0]?.map((e) => e.idempotencyKey))).toEqual(
      new Set(effects[1]?.map((e) => e.idempotencyKey)),
    );
    const [a, b] = await Promise.all([overviewOf(four), overviewOf(one)]);
    expect(a.total.jobsByState).toEqual(b.total.jobsByState);
    expect(a.total.effectsByStatus).toEqual(b.total.effectsByStatus);
    // Four job shards and the runs home; one shard is both.
    expect(a.shards.map((s) => s.layout)).toEqual(["current", "current", "current", "current", "runs"]);
    expect(b.shards.map((s) => [s.name, s.layout])).toEqual([["ledger", "current"]]);
  });

  it("serve /metrics summed over the shards, with one up gauge per shard", async () => {
    const text = await (await four.worker.fetch("v", "/metrics")).text();
    const failed = Array.from({ length: JOBS }, (_, i) => i).filter((i) => i % 7 === 0).length;
    expect(text).toContain(`finality_jobs{state="failed"} ${failed}`);
    expect(text).toContain(`finality_jobs{state="succeeded"} ${JOBS - failed}`);
    expect(text).toContain(`finality_effects{status="delivered"} ${JOBS}`);
    expect(text.match(/^finality_shard_up\{.*layout="current"\} 1$/gm)).toHaveLength(SHARDS);
    // One shard: the same gauges, from the single object.
    const single = await (await one.worker.fetch("v", "/metrics")).text();
    expect(single).toContain(`finality_jobs{state="failed"} ${failed}`);
  });

  it("read one job from its shard; a job no shard knows is a 404", async () => {
    const job = await four.worker.fetch("v", "/v1/jobs/acme/job-7");
    expect(await job.json()).toMatchObject({ id: "job-7", state: "failed" });
    const events = (await (await four.worker.fetch("v", "/v1/jobs/acme/job-7/events")).json()) as {
      items: unknown[];
    };
    expect(events.items.length).toBeGreaterThanOrEqual(3);
    expect((await four.worker.fetch("v", "/v1/jobs/acme/nobody")).status).toBe(404);
    // The dashboard's job page too: from the job's shard, not the first one.
    const page = await four.worker.fetch("v", "/jobs/acme/job-7", { headers: { accept: "text/html" } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("job-7");
  });

  it("ignore the shard protocol's headers from a client (they could retire a ledger)", async () => {
    for (const d of [one, four]) {
      const forged = {
        "x-finality-as": "previous",
        "x-finality-layout": "8",
        "x-finality-existing-only": "acme/job-1",
      };
      expect((await d.worker.fetch("v", "/v1/jobs/acme/job-1", { headers: forged })).status).toBe(200);
      const body = JSON.stringify({ jobId: "job-1", state: "running", seq: 1 });
      const after = await d.worker.fetch("v", "/webhooks/acme", {
        method: "POST",
        headers: signWith(SECRET, body),
        body,
      });
      expect(after.status).toBe(200);
    }
  });

  it("refuse a cursor they did not give out, with a problem", async () => {
    const response = await four.worker.fetch("v", "/v1/jobs?cursor=bm90LWpzb24");
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  });

  it("list parked observations across shards, and apply each on its job's shard when registered", async () => {
    for (const d of [four, one]) {
      for (let i = 0; i < 30; i++) {
        const body = JSON.stringify({ jobId: `early-${i}`, state: "succeeded", seq: 1 });
        const response = await d.worker.fetch("v", "/webhooks/strict", {
          method: "POST",
          headers: signWith(SECRET, body),
          body,
        });
        expect(response.status).toBe(200);
        expect(await response.json()).toMatchObject({ outcome: "parked" });
      }
    }
    const [onFour, onOne] = await Promise.all(
      [four, one].map((d) => allPages((p) => d.worker.fetch("v", p), "/v1/parked", 7)),
    );
    const ids = (items: Record<string, unknown>[] | undefined) =>
      (items ?? []).map((p) => String(p.id)).sort();
    expect(ids(onFour)).toHaveLength(30);
    expect(ids(onFour)).toEqual(ids(onOne));
    const registered = await four.worker.fetch("v", "/v1/jobs", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ provider: "strict", id: "early-3" }),
    });
    expect(registered.status).toBe(201);
    expect(await registered.json()).toMatchObject({ id: "early-3", state: "succeeded" });
  });

  it("keep taking webhooks on the other shards while one shard throws", async () => {
    const broken = shardLayout(SHARDS).names[1] as string;
    await four.worker.breakShard(broken);
    const outcomes = new Map<number, number[]>();
    for (let i = 0; i < 40; i++) {
      const id = `after-break-${i}`;
      const body = JSON.stringify({ jobId: id, state: "running", seq: 1 });
      const response = await four.worker.fetch("v", "/webhooks/acme", {
        method: "POST",
        headers: signWith(SECRET, body),
        body,
      });
      await response.arrayBuffer();
      const shard = shardIndexOf({ provider: "acme", id }, SHARDS);
      outcomes.set(shard, [...(outcomes.get(shard) ?? []), response.status]);
    }
    expect(outcomes.get(1)?.length).toBeGreaterThan(0);
    for (const status of outcomes.get(1) ?? []) expect(status).toBeGreaterThanOrEqual(500);
    for (const shard of [0, 2, 3]) {
      expect(outcomes.get(shard)?.length).toBeGreaterThan(0);
      expect(outcomes.get(shard)?.every((s) => s === 200)).toBe(true);
    }
    const overview = await overviewOf(four);
    expect(overview.complete).toBe(false);
    expect(overview.shards.find((s) => s.name === broken)?.error).not.toBeNull();
    // The cron run still reaches the healthy shards, and reports the broken one.
    await expect(four.worker.scheduled("v")).rejects.toThrow(/scheduled run/);
  });
});
