import { describe, expect, it } from "vitest";
import type { Job } from "../../../src/core/model.js";
import { CANONICAL_STATES, isTerminal } from "../../../src/core/states.js";
import type { JobCount, TimeWindow } from "../../../src/store/overview-reads.js";
import { makeEffect, makeEvent, makeJob, T0 } from "../../helpers/records.js";
import { type ContractScope, collectPages, insertEffects, insertJobs } from "./harness.js";

const MINUTE = 60_000;

/** 42 jobs: every state, submitted a minute apart, some stuck, conflicting, anomalous or due. */
function sampleJobs(): Job[] {
  return Array.from({ length: 42 }, (_, i) => {
    const state = CANONICAL_STATES[i % CANONICAL_STATES.length]!;
    const settled = isTerminal(state);
    return makeJob({
      id: `job-${String(i).padStart(2, "0")}`,
      provider: i % 2 === 0 ? "acme" : "generic",
      state,
      submittedAt: T0 + i * MINUTE,
      settledAt: settled ? T0 + i * MINUTE + 30_000 : null,
      settledBy: settled ? (i % 3 === 0 ? "reconcile" : "webhook") : null,
      nextCheckAt: settled ? null : T0 + i * 1000,
      stuck: !settled && i % 4 === 0,
      conflict: settled && i % 5 === 0,
      anomaly: !settled && i % 6 === 0 ? "provider-404" : null,
    });
  });
}

const counts: [string, JobCount, (job: Job) => boolean][] = [
  ["a state", { of: "state", state: "running" }, (j) => j.state === "running"],
  ["a terminal state", { of: "state", state: "lost" }, (j) => j.state === "lost"],
  ["open", { of: "open" }, (j) => j.settledAt === null],
  [
    "open, submitted in a range",
    { of: "open", submittedFrom: T0 + 10 * MINUTE, submittedBefore: T0 + 30 * MINUTE },
    (j) => j.settledAt === null && j.submittedAt >= T0 + 10 * MINUTE && j.submittedAt < T0 + 30 * MINUTE,
  ],
  [
    "open, submitted before",
    { of: "open", submittedBefore: T0 + 15 * MINUTE },
    (j) => j.settledAt === null && j.submittedAt < T0 + 15 * MINUTE,
  ],
  ["stuck", { of: "stuck" }, (j) => j.stuck],
  ["conflict", { of: "conflict" }, (j) => j.conflict],
  ["anomaly", { of: "anomaly" }, (j) => j.anomaly !== null],
  ["due", { of: "due", now: T0 + 20_000 }, (j) => j.nextCheckAt !== null && j.nextCheckAt <= T0 + 20_000],
];

const keys = (jobs: readonly Job[]) => jobs.map((j) => `${j.provider}/${j.id}`);

export function describeOverviewReads(scope: ContractScope): void {
  describe("overview reads", () => {
    it.each(counts)("countJobs: %s, exact under the cap, capped at it", async (_name, what, matches) => {
      const jobs = sampleJobs();
      await insertJobs(scope.store(), jobs);
      const expected = jobs.filter(matches).length;
      expect(expected).toBeGreaterThan(1);
      expect(await scope.store().countJobs(what, 1000)).toEqual({ count: expected, capped: false });
      expect(await scope.store().countJobs(what, expected)).toEqual({ count: expected, capped: true });
      expect(await scope.store().countJobs(what, expected - 1)).toEqual({
        count: expected - 1,
        capped: true,
      });
    });

    it("counts nothing in an empty store", async () => {
      expect(await scope.store().countJobs({ of: "open" }, 10)).toEqual({ count: 0, capped: false });
      expect(await scope.store().countEffects("dead", 10)).toEqual({ count: 0, capped: false });
    });

    it("countEffects counts one status up to the cap", async () => {
      const effects = Array.from({ length: 9 }, (_, i) =>
        makeEffect({ jobId: `job-${i}`, status: i < 4 ? "dead" : i < 7 ? "pending" : "delivered" }),
      );
      await insertEffects(scope.store(), effects);
      expect(await scope.store().countEffects("dead", 100)).toEqual({ count: 4, capped: false });
      expect(await scope.store().countEffects("pending", 2)).toEqual({ count: 2, capped: true });
      expect(await scope.store().countEffects("delivering", 100)).toEqual({ count: 0, capped: false });
    });

    it("oldestOpenJobs lists open jobs by submission time, oldest first", async () => {
      const jobs = sampleJobs().reverse();
      await insertJobs(scope.store(), jobs);
      const open = jobs.filter((j) => j.settledAt === null).sort((a, b) => a.submittedAt - b.submittedAt);
      expect(keys(await scope.store().oldestOpenJobs(5))).toEqual(keys(open.slice(0, 5)));
    });

    it.each(["conflict", "anomaly"] as const)("listFlaggedJobs(%s) pages newest first", async (flag) => {
      const jobs = sampleJobs();
      await insertJobs(scope.store(), jobs);
      const flagged = jobs.filter((j) => (flag === "conflict" ? j.conflict : j.anomaly !== null)).reverse();
      const { items, pages } = await collectPages((cursor) =>
        scope.store().listFlaggedJobs(flag, cursor === undefined ? { limit: 2 } : { limit: 2, cursor }),
      );
      expect(keys(items)).toEqual(keys(flagged));
      expect(pages).toBe(Math.ceil(flagged.length / 2));
    });

    it("settlementsOverTime groups a window's settlements by bucket and source", async () => {
      const jobs = sampleJobs();
      await insertJobs(scope.store(), jobs);
      const window: TimeWindow = {
        from: T0 + 5 * MINUTE,
        to: T0 + 25 * MINUTE,
        bucketMs: 10 * MINUTE,
        cap: 1000,
      };
      const expected = new Map<string, number>();
      for (const job of jobs) {
        if (job.settledAt === null || job.settledAt < window.from || job.settledAt >= window.to) continue;
        const start =
          window.from + Math.floor((job.settledAt - window.from) / window.bucketMs) * window.bucketMs;
        const key = `${start}:${job.settledBy}`;
        expected.set(key, (expected.get(key) ?? 0) + 1);
      }
      const series = await scope.store().settlementsOverTime(window);
      expect(series.complete).toBe(true);
      expect(new Map(series.buckets.map((b) => [`${b.start}:${b.key}`, b.count]))).toEqual(expected);
      const starts = series.buckets.map((b) => b.start);
      expect(starts).toEqual([...starts].sort((a, b) => a - b));
    });

    it("settlementsOverTime reads only the newest `cap` rows, and says so", async () => {
      const jobs = sampleJobs();
      await insertJobs(scope.store(), jobs);
      const settled = jobs.filter((j) => j.settledAt !== null).sort((a, b) => b.settledAt! - a.settledAt!);
      const window: TimeWindow = { from: T0, to: T0 + 60 * MINUTE, bucketMs: 60 * MINUTE, cap: 5 };
      const series = await scope.store().settlementsOverTime(window);
      expect(series.complete).toBe(false);
      expect(series.buckets.reduce((sum, b) => sum + b.count, 0)).toBe(5);
      const newest = settled.slice(0, 5);
      const reconciled = newest.filter((j) => j.settledBy === "reconcile").length;
      expect(series.buckets.find((b) => b.key === "reconcile")?.count ?? 0).toBe(reconciled);
    });

    it("webhookOutcomesOverTime counts webhook events by outcome, ignoring other sources and times", async () => {
      const at = (minute: number) => T0 + minute * MINUTE + 1;
      await scope.store().transaction(async (tx) => {
        const events = [
          makeEvent({ id: "a", at: at(0) }),
          makeEvent({ id: "a", at: at(0), applied: false, reason: "duplicate-delivery" }),
          makeEvent({ id: "b", at: at(1), applied: false, reason: "stale" }),
          makeEvent({ id: "b", at: at(1) }),
          makeEvent({ id: "c", at: at(1), source: "reconcile" }),
          makeEvent({ id: "d", at: at(2), applied: false, reason: "lower-rank" }),
          makeEvent({ id: "e", at: at(3) }),
        ];
        for (const event of events) await tx.appendEvent(event);
      });
      const series = await scope
        .store()
        .webhookOutcomesOverTime({ from: T0, to: at(3) - 1, bucketMs: MINUTE, cap: 100 });
      expect(series).toEqual({
        complete: true,
        buckets: [
          { start: T0, key: "applied", count: 1 },
          { start: T0, key: "duplicate-delivery", count: 1 },
          { start: T0 + MINUTE, key: "applied", count: 1 },
          { start: T0 + MINUTE, key: "stale", count: 1 },
          { start: T0 + 2 * MINUTE, key: "lower-rank", count: 1 },
        ],
      });
    });
  });
}
