import { describe, expect, it } from "vitest";
import { simulationSuite } from "./sim-suite.js";

describe("deterministic simulation, seeds 1001–2000", () => {
  it("holds every invariant under every fault", async () => {
    const { summary } = await simulationSuite(1001, 1000);
    expect(summary.schedules).toBe(1000);
    // CPU-bound and deterministic: 30–60 s alone on a 2-core machine, longer beside other suites.
  }, 240_000);
});
