import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SECRET, signWith } from "../http/helpers/webhooks.js";
import { startWorkerLedger, type WorkerLedger } from "./helpers/worker-ledger.js";

// `cloudflare.pruneBatch` reaches the cron run's retention pass: with windows of under a second,
// one run prunes that many settled jobs (and events) and no more. (pollsPerRun: worker-cron-effects.test.ts.)

const PRUNE_BATCH = 2;
const JOBS = 5;
const WINDOW_DAYS = 0.00001; // 0.864 s

describe("the cron run's retention pass on Workers", () => {
  let worker: WorkerLedger;
  beforeAll(async () => {
    worker = await startWorkerLedger({
      providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } },
      retention: { settledJobsDays: WINDOW_DAYS, eventsDays: WINDOW_DAYS, tombstonesDays: WINDOW_DAYS },
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
