import { afterEach, describe, expect, it, vi } from "vitest";
import type { ModuleMutantName } from "./mutant/module-mutants.js";
import { simulate } from "./simulate.js";

/**
 * Issue 33: a mutant for each invariant no reducer or store mutant reaches, breaking one export
 * of one module of src/ (test/sim/mutant/module-mutants.ts). Every importer in this file sees the
 * module FINALITY_SIM_MUTANT names, read at each call, and the real one when it names none.
 */
vi.mock("../../src/core/bounds.js", async (importOriginal) => {
  const { mutantAtEachCall } = await import("./mutant/module-mutants.js");
  return mutantAtEachCall(
    "src/core/bounds.js",
    await importOriginal<typeof import("../../src/core/bounds.js")>(),
  );
});
vi.mock("../../src/runs/worker-event.js", async (importOriginal) => {
  const { mutantAtEachCall } = await import("./mutant/module-mutants.js");
  return mutantAtEachCall(
    "src/runs/worker-event.js",
    await importOriginal<typeof import("../../src/runs/worker-event.js")>(),
  );
});

const CASES: { mutant: ModuleMutantName; invariant: string; start: number; count: number }[] = [
  { mutant: "time-bounds-unchecked", invariant: "time-bounds-refused", start: 3, count: 2 },
  { mutant: "fence-ignores-expiry", invariant: "no-stale-callback-applied", start: 1, count: 1 },
];

afterEach(() => {
  delete process.env.FINALITY_SIM_MUTANT;
});

describe("the simulator against a broken module, one mutant per invariant", () => {
  for (const { mutant, invariant, start, count } of CASES) {
    it(`fails ${invariant} when ${mutant}`, async () => {
      process.env.FINALITY_SIM_MUTANT = mutant;
      const { summary } = await simulate({ start, count, shrinkFirst: 0 });
      expect(summary.violations.get(invariant), summary.table(mutant)).toBeGreaterThan(0);
      expect(summary.totalViolations, summary.table(mutant)).toBe(summary.violations.get(invariant));
    }, 300_000);
  }

  it("holds every invariant on the same seeds without a mutant", async () => {
    const { summary } = await simulate({ start: 1, count: 4, shrinkFirst: 0 });
    expect(summary.totalViolations, summary.table("no mutant")).toBe(0);
  }, 300_000);
});
