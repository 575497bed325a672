import { afterEach, describe, expect, it } from "vitest";
import { SIM_BROKER } from "./sim-broker.js";
import { simulate } from "./simulate.js";

// The simulated broker without dedupe (a RabbitMQ-like store that keeps a retried publish, or a
// Redis target without its guard): a lost ack or a doubled publish stores one effect twice, and
// `effects-once-same-key` must see it.

afterEach(() => {
  SIM_BROKER.dedupe = true;
});

describe("the simulator against a broker without dedupe", () => {
  it("fails effects-once-same-key", async () => {
    SIM_BROKER.dedupe = false;
    const { summary } = await simulate({ start: 1, count: 20, shrinkFirst: 0 });
    expect(summary.violations.get("effects-once-same-key")).toBeGreaterThan(0);
  }, 300_000);
});
