import { describe, expect, it } from "vitest";
import { simulationSuite } from "./sim-suite.js";

// Seeds 1–1000 here, 1001–2000 in sim-more.test.ts: two files, so that vitest runs them side by side.
describe("deterministic simulation, seeds 1–1000", () => {
  it("holds every invariant under every fault", async () => {
    const { summary } = await simulationSuite(1, 1000);
    expect(summary.schedules).toBe(1000);
    // CPU-bound and deterministic: 40–90 s alone on a 2-core machine, much longer beside other
    // suites (over 240 s with the machine's load at 10).
  }, 600_000);
});
