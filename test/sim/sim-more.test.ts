import { describe, expect, it } from "vitest";
import { simulationSuite } from "./sim-suite.js";

describe("deterministic simulation, seeds 1001–2000", () => {
  it("holds every invariant under every fault", async () => {
    const { summary } = await simulationSuite(1001, 1000);
    expect(summary.schedules).toBe(1000);
    // CPU-bound and deterministic: 40–90 s alone on a 2-core machine, much longer beside other
    // suites (over 240 s with the machine's load at 10).
  }, 600_000);
});
