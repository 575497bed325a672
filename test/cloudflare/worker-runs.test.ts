import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWorker } from "../../src/worker/worker-client.js";
import { SECRET } from "../http/helpers/webhooks.js";
import { type ShardedWorker, startShardedWorkers } from "./helpers/sharded-workers.js";

const POOL_TOKEN = "pool-token-0123456789abcdef";
const RUNS = 12;

interface RunJson {
  id: string;
  status: string;
  output: unknown;
  attempts: { status: string; error: { code: string } | null }[];
}

/**
 * Runs on Workers, with the ledger sharded over 2 objects: runs and their leases live on the
 * runs home (the object named `ledger`), claims long-poll there, and its alarm sweeps expired
 * leases without any cron run.
 */
describe("runs and the worker API on a sharded Worker", () => {
  let worker: ShardedWorker;
  beforeAll(async () => {
    worker = await startShardedWorkers([
      {
        name: "v",
        config: {
          providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } },
          workers: { pools: { default: { token: POOL_TOKEN } }, maxUnstartedReleases: 0 },
          cloudflare: { shards: 2 },
          log: { level: "error" },
        },
      },
    ]);
  }, 120_000);
  afterAll(() => worker?.dispose());

  const enqueue = async (kind: string, input: unknown, maxAttempts = 3) => {
    const response = await worker.fetch("v", "/v1/runs", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ kind, input, maxAttempts }),
    });
    expect(response.status).toBe(201);
    return (await response.json()) as RunJson;
  };
  const run = async (id: string) => (await (await worker.fetch("v", `/v1/runs/${id}`)).json()) as RunJson;
  const asPool = { authorization: `Bearer ${POOL_TOKEN}`, "content-type": "application/json" };

  it("a worker client claims and completes every run", async () => {
    const queued = await Promise.all(Array.from({ length: RUNS }, (_, n) => enqueue("resize", { n })));
    let finished = 0;
    let allDone: () => void = () => {};
    const done = new Promise<void>((resolve) => {
      allDone = resolve;
    });
    const client = createWorker({
      baseUrl: worker.url("v").toString().replace(/\/$/, ""),
      token: POOL_TOKEN,
      workerId: "cf-worker-1",
      kinds: ["resize"],
      concurrency: 3,
      waitSeconds: 2,
      handler: async (claimed) => {
        const { n } = claimed.input as { n: number };
        queueMicrotask(() => {
          if (++finished === RUNS) allDone();
        });
        return { doubled: n * 2 };
      },
      onError: () => {},
    });
    client.start();
    await done;
    // The handler returned; its result is reported right after. Read each run until it says so.
    const settled: RunJson[] = [];
    for (const { id } of queued) {
      let current = await run(id);
      while (current.status !== "succeeded") current = await run(id);
      settled.push(current);
    }
    await client.stop();
    expect(settled.map((r) => (r.output as { doubled: number }).doubled).sort((a, b) => a - b)).toEqual(
      Array.from({ length: RUNS }, (_, n) => n * 2).sort((a, b) => a - b),
    );
    // A run's job is read from beside its run, not from a job shard.
    const job = await worker.fetch("v", `/v1/jobs/runs/${queued[0]?.id}`);
    expect(await job.json()).toMatchObject({ provider: "runs", state: "succeeded" });
  });

  it("a claim long-polls: it waits for a run enqueued while it waits", async () => {
    const claim = worker.fetch("v", "/v1/workers/cf-worker-2/claim", {
      method: "POST",
      headers: asPool,
      body: JSON.stringify({ kinds: ["later"], waitSeconds: 20, leaseSeconds: 30 }),
    });
    const queued = await enqueue("later", { x: 1 });
    const answer = await claim;
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ run: { id: queued.id }, attempt: { generation: 1 } });
  });

  it("a lease that runs out is swept by the object's alarm (no cron run), and the late worker is fenced off", {
    timeout: 60_000,
  }, async () => {
    const queued = await enqueue("abandoned", { x: 1 }, 1);
    const claimed = await worker.fetch("v", "/v1/workers/cf-worker-3/claim", {
      method: "POST",
      headers: asPool,
      body: JSON.stringify({ kinds: ["abandoned"], waitSeconds: 0, leaseSeconds: 1 }),
    });
    const attempt = ((await claimed.json()) as { attempt: { id: string; generation: number } }).attempt;
    // The worker goes silent. Only the alarm set for the lease's end can notice.
    // Read until it shows, for at most 30 s: a missing alarm would never end the attempt.
    const giveUpAt = Date.now() + 30_000;
    let current = await run(queued.id);
    while (current.status !== "lost" && Date.now() < giveUpAt) current = await run(queued.id);
    expect(current.status).toBe("lost");
    expect(current.attempts[0]?.error?.code).toMatch(/^REMOTE_RUN_LEASE_EXPIRED/);
    const late = await worker.fetch("v", `/v1/attempts/${attempt.id}/events`, {
      method: "POST",
      headers: asPool,
      body: JSON.stringify({ generation: attempt.generation, sequence: 1, type: "succeeded", output: {} }),
    });
    expect(late.status).toBe(409);
    expect(await late.json()).toMatchObject({ code: "stale-generation" });
  });
});
