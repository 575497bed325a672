import { describe, expect, it, vi } from "vitest";
import { runSchedule, simDatabasePath } from "./run-schedule.js";
import { generateSchedule } from "./schedule.js";
import { describeFailure, simulate } from "./simulate.js";

// The reducer as every importer sees it in this file: `running` overwrites a terminal state.
vi.mock("../../src/core/reducer.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../src/core/reducer.js")>();
  const { MUTANTS } = await import("./mutant/mutants.js");
  return { ...real, reduce: MUTANTS["running-overwrites-terminal"](real.reduce) };
});

describe("the simulator against a broken reducer", () => {
  it("fails with a seed and a short trace when `running` may overwrite `succeeded`", async () => {
    const { summary, failures } = await simulate({ start: 1, count: 20, shrinkFirst: 1 });
    expect(summary.violations.get("monotonic")).toBeGreaterThan(0);
    const [failure] = failures;
    expect(failure).toBeDefined();
    if (!failure) return;
    const report = describeFailure(failure);
    console.log(report);
    expect(report).toContain(`replay: npm run sim -- --seed ${failure.seed}`);
    expect(failure.shrunkResult.violation?.invariant).toBe("monotonic");
    expect(failure.shrunk.steps.length).toBeLessThanOrEqual(15);
  });

  it("replays a seed exactly: same steps, same trace", async () => {
    const path = simDatabasePath("determinism");
    const first = await runSchedule(generateSchedule(7), path);
    const second = await runSchedule(generateSchedule(7), path);
    expect(second.trace).toEqual(first.trace);
    expect(second.violation).toEqual(first.violation);
  });
});
