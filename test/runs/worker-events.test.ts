import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { WorkerEvent } from "../../src/runs/worker-event.js";
import { openEngine, runSnapshot } from "./engine-harness.js";

/** What a worker sends for one attempt, in order: started, progress × n, then its end. */
function sent(progressCount: number, end: "succeeded" | "failed" | "cancelled"): WorkerEvent[] {
  const events: WorkerEvent[] = [{ generation: 1, sequence: 1, type: "started" }];
  for (let i = 0; i < progressCount; i++)
    events.push({ generation: 1, sequence: i + 2, type: "progress", progress: i + 2 });
  events.push({
    generation: 1,
    sequence: progressCount + 2,
    type: end,
    ...(end === "succeeded" ? { output: "done" } : { error: { message: end, retryable: false } }),
  });
  return events;
}

const delivery = fc
  .record({
    progressCount: fc.integer({ min: 0, max: 5 }),
    end: fc.constantFrom("succeeded" as const, "failed" as const, "cancelled" as const),
  })
  .chain(({ progressCount, end }) => {
    const events = sent(progressCount, end);
    // Every event at least once, some twice (retries), in any order.
    return fc
      .tuple(fc.shuffledSubarray(events), fc.shuffledSubarray(events, { minLength: events.length }))
      .chain(([repeats, all]) =>
        fc.shuffledSubarray([...all, ...repeats], { minLength: all.length + repeats.length }),
      )
      .map((arrived) => ({ events, arrived, end }));
  });

describe("worker callbacks delivered out of order and repeated", () => {
  it("end in the worker's final state, apply each sequence at most once, and record each once", async () => {
    await fc.assert(
      fc.asyncProperty(delivery, async ({ events, arrived, end }) => {
        const engine = openEngine();
        const { run } = await engine.runs.enqueue({ kind: "render", maxAttempts: 1 });
        const claimed = (await engine.runs.claim({ workerId: "w1" }))!;
        const outcomes = new Map<number, string[]>();
        let lastRank = -1;
        let lastProgress = 0;
        const rank = { claimed: 0, starting: 1, running: 2 } as Record<string, number>;
        for (const event of arrived) {
          const result = await engine.runs.recordEvent(claimed.attempt.id, event);
          outcomes.set(event.sequence, [...(outcomes.get(event.sequence) ?? []), result.outcome]);
          const now = rank[result.attempt.status] ?? 3;
          expect(now).toBeGreaterThanOrEqual(lastRank);
          lastRank = now;
          // Progress values are their sequence numbers: the kept one never goes back.
          const progress = (result.attempt.progress as number | null) ?? 0;
          expect(progress).toBeGreaterThanOrEqual(lastProgress);
          lastProgress = progress;
        }
        for (const [, seen] of outcomes) {
          expect(seen.slice(1).every((o) => o === "duplicate")).toBe(true);
          expect(seen[0]).not.toBe("duplicate");
        }
        const terminal = events.at(-1)!.sequence;
        expect(outcomes.get(terminal)?.[0]).toBe("applied");
        const after = await runSnapshot(engine, run.id);
        expect(after.run?.status).toBe(end);
        expect(after.job?.state).toBe(end);
        expect(after.effects).toHaveLength(1);
        const workerEvents = after.events.filter((e) => e.type.startsWith("worker."));
        expect(workerEvents).toHaveLength(events.length);
      }),
      { numRuns: 40 },
    );
  });
});
