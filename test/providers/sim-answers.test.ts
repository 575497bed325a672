import { describe, expect, it } from "vitest";
import type { Observation } from "../../src/core/model.js";
import { schemaDatedObservation } from "../sim/sim-answers.js";

// The simulator's schema-dated answers (test/sim/sim-answers.ts): only the time changes, the
// same random stream gives the same answer (a seed replays), and the times are the schema's own.

/** A seeded random in [0, 1) (mulberry32), as the simulator's. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const STATES = ["pending", "running", "succeeded", "failed", "expired", "cancelled"];
const observation = (state: string): Observation => ({
  provider: "acme",
  id: "job-1",
  state,
  source: "reconcile",
  updateTime: Date.UTC(2026, 0, 1),
});

describe("schemaDatedObservation", () => {
  it("keeps everything but the time, and replays from the same random", () => {
    const times = new Set<string>();
    for (let seed = 1; seed <= 200; seed++) {
      const state = STATES[seed % STATES.length] as string;
      const dated = schemaDatedObservation(observation(state), seeded(seed));
      expect(schemaDatedObservation(observation(state), seeded(seed))).toEqual(dated);
      const { updateTime, ...rest } = dated;
      const { updateTime: _given, ...before } = observation(state);
      expect(rest).toEqual(before);
      times.add(updateTime === undefined ? "none" : updateTime < Date.UTC(2000, 0, 1) ? "early" : "in range");
    }
    // The schema's times reach the ledger: none at all, before 2000 (0, 1971), and ordinary ones.
    expect(times).toEqual(new Set(["none", "early", "in range"]));
  });

  it("leaves a state with no batch status (lost) as it came", () => {
    expect(schemaDatedObservation(observation("lost"), seeded(1))).toEqual(observation("lost"));
  });
});
