import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EffectReceiver } from "../helpers/receiver.js";
import { SECRET, signWith } from "../http/helpers/webhooks.js";
import { type ShardedWorker, startShardedWorkers } from "./helpers/sharded-workers.js";

// The runtime killed while an alarm is delivering effects (issue #32): a new workerd on the same
// storage, as after a crash, an eviction or a deploy. The deliveries in flight have an unknown
// outcome; they must go out again, under the same key, without waiting for a cron run or for the
// dead run's lease (`effectDelivery.leaseSeconds`, 60 s by default) to run out.

const JOBS = 40;
/** Far below the 60 s lease the dead run left on its claims, far above a prompt redelivery. */
const PROMPTLY_MS = 15_000;

const base = (receiver: EffectReceiver) => ({
  providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } },
  effects: [{ name: "notify", url: receiver.url, secret: SECRET, on: ["succeeded"] }],
  // Quick retries while the jobs are being settled (see `holdOnceAllSettled`); the lease is the
  // default 60 s that the deliveries waited out.
  effectDelivery: { retrySeconds: [0.1] },
  log: { level: "error" },
});

describe("effects interrupted by the runtime's death", () => {
  const receiver = new EffectReceiver(SECRET);
  let dir: string;
  let worker: ShardedWorker | null = null;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "finality-interrupted-"));
    await receiver.listen();
    receiver.deliveries.length = 0;
    receiver.applied.clear();
  });
  afterEach(async () => {
    await worker?.dispose();
    worker = null;
    for (const held of receiver.held.splice(0)) held.destroy();
    await receiver.close();
    await rm(dir, { recursive: true, force: true });
  });

  /**
   * The receiver for the run that will be killed: it refuses (503, retried at once) until every job
   * is settled, then answers the even jobs 204 and holds the odd ones open, so that when the
   * runtime dies half the deliveries have a recorded outcome and half an unknown one.
   */
  function holdOnceAllSettled(): { settled(): void } {
    let settled = false;
    receiver.decide = (delivery) => {
      if (!settled) return 503;
      return Number(delivery.body.job.id.slice("job-".length)) % 2 === 0 ? 204 : "hold";
    };
    return {
      settled: () => {
        settled = true;
      },
    };
  }

  async function settleAll(w: ShardedWorker, version: string): Promise<void> {
    const gate = holdOnceAllSettled();
    for (let i = 0; i < JOBS; i++) {
      const body = JSON.stringify({ jobId: `job-${i}`, state: "succeeded", result: { i } });
      const response = await w.fetch(version, "/webhooks/acme", {
        method: "POST",
        headers: signWith(SECRET, body, { id: `settle-${i}` }),
        body,
      });
      await response.arrayBuffer();
      expect(response.status).toBe(200);
    }
    gate.settled();
  }

  /**
   * Kills the runtime once every odd job's delivery is held open and every even one answered,
   * restarts it on the same storage, and answers how long (ms) the restart took to deliver
   * everything; `wake` is the first request after the restart (it starts the ledger objects).
   */
  async function killMidDelivery(
    first: ShardedWorker,
    version: string,
    restart: () => Promise<ShardedWorker>,
    wake: (w: ShardedWorker) => Promise<Response>,
  ): Promise<number> {
    // An alarm run waits for all its deliveries, so the held ones come out a run at a time.
    const isOdd = (id: string) => Number(id.slice("job-".length)) % 2 === 1;
    const heldJobs = () => new Set(receiver.deliveries.map((d) => d.body.job.id).filter(isOdd));
    await receiver.until(() => heldJobs().size === JOBS / 2 && receiver.applied.size === JOBS / 2);
    // And the even ones' outcomes are recorded (not merely answered) before the runtime dies.
    await expect
      .poll(
        async () => {
          const answer = await first.fetch(version, "/v1/effects?status=delivered&limit=100");
          return ((await answer.json()) as { items: unknown[] }).items.length;
        },
        { timeout: 20_000 },
      )
      .toBe(JOBS / 2);
    await first.dispose();
    // The dead runtime never reads the held answers: their outcome is unknown to the ledger.
    for (const held of receiver.held.splice(0)) held.destroy();
    receiver.decide = () => 204;
    const before = receiver.deliveries.length;
    const killedAt = performance.now();
    worker = await restart();
    // No cron run: the first request to reach the objects after the restart is enough.
    expect((await wake(worker)).status).toBe(200);
    await receiver.until(() => receiver.applied.size === JOBS);
    const took = performance.now() - killedAt;
    const after = receiver.deliveries.slice(before);
    // Only the deliveries whose outcome died with the runtime go again, each once, under the key
    // the receiver already saw, as the next attempt.
    expect(after.map((d) => d.body.job.id).sort()).toEqual(
      Array.from({ length: JOBS }, (_, i) => `job-${i}`)
        .filter(isOdd)
        .sort(),
    );
    const held = receiver.deliveries.slice(0, before);
    for (const again of after) {
      const earlier = held.filter((d) => d.body.job.id === again.body.job.id);
      expect(earlier.map((d) => d.key)).toContain(again.key);
      expect(again.attempt).toBe(Math.max(...earlier.map((d) => d.attempt)) + 1);
    }
    return took;
  }

  it("resumes after a restart at the next request, each unknown delivery sent again under its key", async () => {
    const config = base(receiver);
    const start = () => startShardedWorkers([{ name: "v", config }], {}, { persist: dir });
    worker = await start();
    await settleAll(worker, "v");
    const took = await killMidDelivery(worker, "v", start, (w) => w.fetch("v", "/healthz"));
    expect(took).toBeLessThan(PROMPTLY_MS);
  }, 120_000);

  it("after a 2 → 4 reshard, the old layout's claims are taken over at once by the new deploy", async () => {
    const config = base(receiver);
    worker = await startShardedWorkers(
      [{ name: "deploy", config: { ...config, cloudflare: { shards: 2 } } }],
      {},
      { persist: dir },
    );
    await settleAll(worker, "deploy");
    const restart = () =>
      startShardedWorkers(
        // The same Worker deployed again (same script, same objects), now with 4 shards.
        [{ name: "deploy", config: { ...config, cloudflare: { shards: 4, previousShards: 2 } } }],
        {},
        { persist: dir },
      );
    // A scrape reaches every object, the draining layout's included.
    const took = await killMidDelivery(worker, "deploy", restart, (w) => w.fetch("deploy", "/metrics"));
    expect(took).toBeLessThan(PROMPTLY_MS);
  }, 120_000);
});
