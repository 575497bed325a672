import { afterEach, describe, expect, it } from "vitest";
import { simulate } from "./simulate.js";

/**
 * Issue 33, defect 5: the simulator's retention passes run with a tombstone window as short as
 * the jobs' (test/sim/sim-late.ts), so only the pass's own rule (a tombstone outlives its job by
 * every way back) keeps late webhooks and replays of pruned jobs from firing again. The mutant
 * `tombstone-window-only` is the pass before the fix; `no-effect-after-prune` must catch it, and
 * nothing else.
 */
afterEach(() => {
  delete process.env.FINALITY_SIM_MUTANT;
});

describe("the simulator against the retention pass before issue 33", () => {
  it("fails no-effect-after-prune when tombstones are pruned after tombstonesDays alone", async () => {
    process.env.FINALITY_SIM_MUTANT = "tombstone-window-only";
    const { summary } = await simulate({ start: 1, count: 6, shrinkFirst: 0 });
    const mutant = "tombstone-window-only";
    expect(summary.violations.get("no-effect-after-prune"), summary.table(mutant)).toBeGreaterThan(0);
    expect(summary.totalViolations, summary.table(mutant)).toBe(
      summary.violations.get("no-effect-after-prune"),
    );
  }, 120_000);
});
