import { afterEach, describe, expect, it } from "vitest";
import type { ProcessMutantName } from "./mutant/process-mutants.js";
import type { StoreMutantName } from "./mutant/store-mutants.js";
import { simulate } from "./simulate.js";

/**
 * One store mutant per invariant added for issue 15 (test/sim/mutant/store-mutants.ts), each
 * bringing back one of the fixed defects: the simulator must fail it, under that invariant and no
 * other. The seed ranges are the first few schedules that reach each class. (Not in
 * mutant.test.ts: that file's vi.mock breaks the reducer for every test in it.)
 */
const CASES: {
  mutant: StoreMutantName | ProcessMutantName;
  invariant: string;
  start: number;
  count: number;
  /** Another invariant the same defect may trip first on some seeds (it is the same class). */
  alsoSeen?: string;
}[] = [
  { mutant: "tombstone-forgotten", invariant: "no-effect-after-prune", start: 1, count: 6 },
  { mutant: "parked-left-behind", invariant: "parked-applied-on-register", start: 1, count: 3 },
  { mutant: "late-kind-effect-skipped", invariant: "effects-for-every-match", start: 22, count: 1 },
  { mutant: "lease-ignored", invariant: "no-parallel-delivery", start: 1, count: 6 },
  // Issue 17: a job never registered, with every webhook lost, is found by discovery or by nothing.
  { mutant: "discovery-cursor-ahead", invariant: "settled-in-time", start: 1, count: 3 },
  // Issue 33: one per invariant that had none.
  { mutant: "alert-skipped", invariant: "stuck-alerted-once", start: 1, count: 8 },
  { mutant: "amendments-dropped", invariant: "feed-settled-once", start: 16, count: 1 },
  { mutant: "running-events-dropped", invariant: "acked-webhook-kept", start: 1, count: 4 },
  { mutant: "lost-without-code", invariant: "lost-worker-declared-lost", start: 1, count: 8 },
  {
    mutant: "parked-lookup-misses",
    invariant: "parked-inbox-drained",
    start: 1,
    count: 8,
    alsoSeen: "parked-applied-on-register",
  },
  { mutant: "leases-never-due", invariant: "runs-settle", start: 1, count: 1 },
  // 2026-12-06: a worker that never began costs no attempt; a report is never taken for another.
  { mutant: "claim-counts-as-alive", invariant: "unstarted-attempt-refunded", start: 1, count: 1 },
  { mutant: "seq-zero-taken", invariant: "callback-heard", start: 1, count: 1 },
  // A process mutant (test/sim/mutant/process-mutants.ts): the run service as the edge calls it.
  { mutant: "claim-deaf-to-abort", invariant: "aborted-claim-claims-nothing", start: 7, count: 1 },
  // 2026-12-06: a worker's end that claims its next run (`next`), its first answer lost.
  { mutant: "retried-end-claims-anew", invariant: "retried-end-claims-nothing-new", start: 18, count: 1 },
  // 2026-12-07: effects claimed by the transaction that enqueues them (DispatcherOptions.handoff).
  { mutant: "handed-unclaimed", invariant: "no-parallel-delivery", start: 27, count: 1 },
  // 2026-12-08: a handed effect's first attempt delivers the job its transaction wrote, unread.
  { mutant: "settlement-stored-otherwise", invariant: "delivered-job-as-settled", start: 4, count: 1 },
];

afterEach(() => {
  delete process.env.FINALITY_SIM_MUTANT;
});

describe("the simulator against a broken store", () => {
  for (const { mutant, invariant, start, count, alsoSeen } of CASES) {
    it(`fails ${invariant} when ${mutant}`, async () => {
      process.env.FINALITY_SIM_MUTANT = mutant;
      // Not shrunk here (shrinking runs hundreds of schedules): `npm run sim -- --seed N --mutant
      // NAME` shrinks one. Every violation seen must be this invariant's: it is the one that catches it.
      const { summary } = await simulate({ start, count, shrinkFirst: 0 });
      expect(summary.violations.get(invariant), summary.table(mutant)).toBeGreaterThan(0);
      const also = alsoSeen === undefined ? 0 : (summary.violations.get(alsoSeen) ?? 0);
      expect(summary.totalViolations, summary.table(mutant)).toBe(summary.violations.get(invariant)! + also);
    }, 120_000);
  }

  it("holds every invariant on the same seeds without a mutant", async () => {
    const { summary } = await simulate({ start: 1, count: 22 });
    expect(summary.totalViolations).toBe(0);
  }, 120_000);
});
