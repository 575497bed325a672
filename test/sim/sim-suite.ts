import { expect } from "vitest";
import { CONFIG_BUCKETS } from "./sim-config.js";
import { FAULT_KINDS } from "./sim-types.js";
import { describeFailure, simulate } from "./simulate.js";
import type { Summary } from "./summary.js";

/**
 * Counted, but not faults: edges the schedules reach only when they span many simulated days, so
 * their counts show how often an edge is reached rather than being required in every run — a late
 * webhook the simulator does NOT send because it would fall past the senders' retry window, a
 * sweep gap longer than the discovery lookback (both outside the promise), and a tombstone that
 * expired once every way back to its job had closed (two of 20,000 schedules on 2026-12-02).
 */
const WITHHELD = new Set<string>([
  "late-webhook-past-retry-window",
  "sweep-gap-past-lookback",
  "tombstone-expired",
]);

/**
 * Runs `count` schedules from seed `start` and asserts: no invariant violated (else the first
 * failure's seed and shrunk trace are the assertion message), and every fault kind injected at
 * least once and every configuration bucket drawn at least once, so that a generator change
 * cannot quietly stop testing a fault or a configuration.
 */
export async function simulationSuite(start: number, count: number): Promise<{ summary: Summary }> {
  const { summary, failures } = await simulate({ start, count, shrinkFirst: 1 });
  console.log(summary.table(`vitest: seeds ${start}–${start + count - 1}`));
  const failure = failures[0];
  expect(summary.totalViolations, failure ? describeFailure(failure) : "").toBe(0);
  const missing = FAULT_KINDS.filter((kind) => !WITHHELD.has(kind) && (summary.faults.get(kind) ?? 0) === 0);
  expect(missing, "fault kinds never injected").toEqual([]);
  const undrawn = CONFIG_BUCKETS.filter((bucket) => (summary.configDraws.get(bucket) ?? 0) === 0);
  expect(undrawn, "configuration buckets never drawn").toEqual([]);
  return { summary };
}
