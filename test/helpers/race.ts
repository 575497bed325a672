import type { Observation } from "../../src/core/model.js";
import type { TerminalState } from "../../src/core/states.js";
import type { Store } from "../../src/store/store.js";

export type Side = "a" | "b";

export const raceJobId = (i: number) => `race-${String(i).padStart(4, "0")}`;

/**
 * What one side of the race reports for job i: running, a terminal state, and a repeat of it.
 * Side a always says succeeded (repeated as a new delivery); side b says failed for even jobs
 * (a conflicting terminal) and succeeded for odd ones, repeated with the same delivery id.
 * Side b walks the jobs in reverse, so that two writers that start apart still meet mid-way.
 */
export function raceObservations(side: Side, jobs: number): Observation[] {
  const out: Observation[] = [];
  for (let n = 0; n < jobs; n++) {
    const i = side === "a" ? n : jobs - 1 - n;
    const id = raceJobId(i);
    const terminal: TerminalState = side === "b" && i % 2 === 0 ? "failed" : "succeeded";
    const base = { provider: "generic", id, source: "webhook" } as const;
    out.push({ ...base, state: "running", seq: 1, deliveryId: `${side}-${id}-running` });
    out.push({ ...base, state: terminal, seq: 2, deliveryId: `${side}-${id}-end` });
    out.push({
      ...base,
      state: terminal,
      seq: 2,
      deliveryId: side === "a" ? `a-${id}-again` : `b-${id}-end`,
    });
  }
  return out;
}

/** Outbox rows per job id, read through the port. */
export async function outboxRowsByJob(store: Store): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  let cursor: string | undefined;
  do {
    const page = await store.listEffects({ limit: 500, cursor });
    for (const effect of page.items) counts.set(effect.jobId, (counts.get(effect.jobId) ?? 0) + 1);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return counts;
}
