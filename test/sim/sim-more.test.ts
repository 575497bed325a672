import { describe, expect, it } from "vitest";
import { simulationSuite } from "./sim-suite.js";

// Part of `npm run test:all`'s 2,000 schedules (see sim.test.ts).
describe("deterministic simulation, seeds 301–1150", () => {
  it("holds every invariant under every fault", async () => {
    const { summary } = await simulationSuite(301, 850);
    expect(summary.schedules).toBe(850);
  }, 600_000);
});
