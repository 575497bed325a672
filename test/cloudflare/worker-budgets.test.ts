import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EffectReceiver } from "../helpers/receiver.js";
import { SECRET, signWith } from "../http/helpers/webhooks.js";
import { startWorkerLedger, type WorkerLedger } from "./helpers/worker-ledger.js";

// `cloudflare.pruneBatch` reaches the cron run's retention pass: with windows of under a second,
// one run prunes that many settled jobs (and events) and no more. `cloudflare.effectsPerRun`
// reaches the alarm's deliveries: a run sends that many effects at once, no more, and the next run
// sends the rest. (pollsPerRun: worker-cron-effects.test.ts.)

const PRUNE_BATCH = 2;
const JOBS = 5;
const WINDOW_DAYS = 0.00001; // 0.864 s

describe("the cron run's retention pass on Workers", () => {
  let worker: WorkerLedger;
  beforeAll(async () => {
    worker = await startWorkerLedger({
      providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } },
      retention: { settledJobsDays: WINDOW_DAYS, eventsDays: WINDOW_DAYS },
      cloudflare: { pruneBatch: PRUNE_BATCH },
      log: { level: "info" },
    });
  });
  afterAll(async () => {
    await worker?.dispose();
  });

  const jobCount = async () =>
    ((await (await worker.fetch("/v1/jobs?provider=acme&limit=100")).json()) as { items: unknown[] }).items
      .length;

  it("prunes at most cloudflare.pruneBatch rows of each table per run", async () => {
    for (let i = 0; i < JOBS; i++) {
      const body = JSON.stringify({ jobId: `job-${i}`, state: "succeeded" });
      const answer = await worker.fetch("/webhooks/acme", {
        method: "POST",
        headers: signWith(SECRET, body),
        body,
      });
      expect(answer.status).toBe(200);
    }
    expect(await jobCount()).toBe(JOBS);
    // The windows are measured on the wall clock: only waiting them out makes the rows expired.
    await new Promise((resolve) => setTimeout(resolve, WINDOW_DAYS * 86_400_000 + 200));
    await worker.scheduled();
    const summary = worker.runtimeLog
      .filter((line) => line.includes('"scheduled run"'))
      .map((line) => JSON.parse(line.slice(line.indexOf("{"))) as { pruned: Record<string, number> });
    expect(summary).toHaveLength(1);
    expect(summary[0]?.pruned.settledJobs).toBe(PRUNE_BATCH);
    expect(await jobCount()).toBe(JOBS - PRUNE_BATCH);
  });
});

describe("the alarm's effect deliveries on Workers", () => {
  const EFFECTS_PER_RUN = 2;
  const SETTLED = 5;
  const receiver = new EffectReceiver(SECRET);
  let worker: WorkerLedger;
  beforeAll(async () => {
    await receiver.listen();
    worker = await startWorkerLedger({
      providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } },
      effects: [{ name: "notify", url: receiver.url, secret: SECRET, on: ["succeeded"] }],
      // Far more than the run's budget: without it one run would send every due effect at once.
      effectDelivery: { concurrency: 50 },
      cloudflare: { effectsPerRun: EFFECTS_PER_RUN },
      log: { level: "error" },
    });
  });
  afterAll(async () => {
    await worker?.dispose();
    await receiver.close();
  });

  it("sends at most cloudflare.effectsPerRun effects per run, and every effect in the end", async () => {
    // A slow receiver: a run's deliveries are all in flight together, and the next run starts
    // only once they are answered.
    receiver.delayMs = 300;
    let answered = 0;
    let mostInFlight = 0;
    receiver.decide = () => {
      mostInFlight = Math.max(mostInFlight, receiver.deliveries.length - answered);
      answered += 1;
      return 204;
    };
    const statuses = await Promise.all(
      Array.from({ length: SETTLED }, (_, i) => {
        const body = JSON.stringify({ jobId: `paced-${i}`, state: "succeeded" });
        return worker
          .fetch("/webhooks/acme", { method: "POST", headers: signWith(SECRET, body), body })
          .then((answer) => answer.status);
      }),
    );
    expect(statuses).toEqual(Array(SETTLED).fill(200));
    await receiver.until(() => receiver.applied.size === SETTLED);
    expect(mostInFlight).toBe(EFFECTS_PER_RUN);
  });
});
