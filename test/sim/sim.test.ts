import { describe, expect, it } from "vitest";
import { simulationSuite } from "./sim-suite.js";

// Seeds 1–300 here, in `npm test`'s fast loop; 301–1150 in sim-more.test.ts and 1151–2000 in
// sim-rest.test.ts, run by `npm run test:all` side by side: 2,000 schedules in all.
describe("deterministic simulation, seeds 1–300", () => {
  it("holds every invariant under every fault", async () => {
    const { summary } = await simulationSuite(1, 300);
    expect(summary.schedules).toBe(300);
    // CPU-bound and deterministic: 40–90 s per 1,000 alone on a 2-core machine, much longer
    // beside other suites (over 240 s with the machine's load at 10).
  }, 600_000);
});
