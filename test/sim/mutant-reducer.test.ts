import { afterEach, describe, expect, it, vi } from "vitest";
import { isMutantName } from "./mutant/mutants.js";
import { simulate } from "./simulate.js";

/**
 * Issue 33: a reducer mutant per invariant that had none (test/sim/mutant/mutants.ts). The reducer
 * every importer sees in this file is the one FINALITY_SIM_MUTANT names, read at each call, and
 * the real one when it names none. The seed ranges are the first schedules that reach each class.
 */
vi.mock("../../src/core/reducer.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../src/core/reducer.js")>();
  const { MUTANTS } = await import("./mutant/mutants.js");
  const reduce: typeof real.reduce = (job, obs, ctx) => {
    const name = process.env.FINALITY_SIM_MUTANT ?? "";
    return isMutantName(name) ? MUTANTS[name](real.reduce)(job, obs, ctx) : real.reduce(job, obs, ctx);
  };
  return { ...real, reduce };
});

const CASES = [
  // Reached through the progress webhook numbered after its completion (issue 33's widening):
  // the completion dropped, the job never settles.
  { mutant: "old-completion-dropped", invariant: "settled-in-time", start: 1, count: 1 },
  { mutant: "cancelled-read-as-failed", invariant: "settled-correctly", start: 1, count: 8 },
  { mutant: "result-dropped", invariant: "results-bounded", start: 1, count: 4 },
  { mutant: "webhook-failed-throws", invariant: "no-5xx", start: 1, count: 8 },
] as const;

afterEach(() => {
  delete process.env.FINALITY_SIM_MUTANT;
});

describe("the simulator against a broken reducer, one mutant per invariant", () => {
  for (const { mutant, invariant, start, count } of CASES) {
    it(`fails ${invariant} when ${mutant}`, async () => {
      process.env.FINALITY_SIM_MUTANT = mutant;
      const { summary } = await simulate({ start, count, shrinkFirst: 0 });
      expect(summary.violations.get(invariant), summary.table(mutant)).toBeGreaterThan(0);
    }, 300_000);
  }
});
