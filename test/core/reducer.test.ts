import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type ReduceResult, reduce } from "../../src/core/reducer.js";
import { isTerminal, rankOf, TERMINAL_STATES } from "../../src/core/states.js";
import {
  finalJob,
  fold,
  observationArb,
  observationSequenceArb,
  permutations,
} from "../helpers/observations.js";
import { cases, job, NOW, obs, running } from "./reducer.cases.js";

describe("reduce: seed cases", () => {
  it.each(cases)("$name", (c) => {
    const result = reduce(c.job, c.obs, { now: NOW, unknownJobs: c.policy ?? "adopt" });
    expect(result.applied).toBe(c.applied);
    if (!result.applied) expect(result.reason).toBe(c.reason);
    if (c.next === null) expect(result.next).toBeNull();
    else expect(result.next).toMatchObject(c.next);
  });

  it("settles only on the first terminal state", () => {
    const first = reduce(running, obs("succeeded"), { now: NOW, unknownJobs: "adopt" });
    expect(first).toMatchObject({ applied: true, settled: true });
    const again = reduce(first.next, obs("succeeded"), { now: NOW + 1, unknownJobs: "adopt" });
    expect(again).toMatchObject({ applied: false, reason: "duplicate", next: null });
    const open = reduce(job({ state: "pending" }), obs("running"), { now: NOW, unknownJobs: "adopt" });
    expect(open).toMatchObject({ applied: true, settled: false });
  });
});

const writes = (r: ReduceResult) => r.next !== null;

describe("reduce: properties", () => {
  it("(a) rank never goes down, and ends at the highest rank observed", () => {
    fc.assert(
      fc.property(observationSequenceArb, (observations) => {
        let rank = -1;
        for (const step of fold(observations)) {
          const now = rankOf(step.after!.state);
          expect(now).toBeGreaterThanOrEqual(rank);
          rank = now;
        }
        expect(rank).toBe(Math.max(...observations.map((o) => rankOf(o.state))));
      }),
    );
  });

  it("(b) the first applied terminal state is final", () => {
    fc.assert(
      fc.property(observationSequenceArb, (observations) => {
        let settled: string | null = null;
        for (const step of fold(observations)) {
          if (settled !== null) {
            expect(step.result.applied).toBe(false);
            expect(step.after!.state).toBe(settled);
          } else if (step.result.applied && isTerminal(step.result.next.state)) {
            settled = step.result.next.state;
            expect(step.result.settled).toBe(true);
            expect(step.after!.settledAt).not.toBeNull();
          }
        }
        const terminal = observations.find((o) => isTerminal(o.state));
        expect(settled).toBe(terminal?.state ?? null);
      }),
    );
  });

  it("(c) one terminal state in a multiset wins in every order", () => {
    const multiset = fc
      .tuple(
        fc.array(
          observationArb.filter((o) => !isTerminal(o.state)),
          { maxLength: 4 },
        ),
        fc.constantFrom(...TERMINAL_STATES),
        fc.array(observationArb, { minLength: 1, maxLength: 2 }),
      )
      .map(([open, terminal, ends]) => [...open, ...ends.map((o) => ({ ...o, state: terminal }))]);
    fc.assert(
      fc.property(multiset, (observations) => {
        const terminal = observations.find((o) => isTerminal(o.state))!.state;
        for (const order of permutations(observations)) expect(finalJob(order)?.state).toBe(terminal);
      }),
      { numRuns: 60 },
    );
  });

  it("(d) version grows by exactly one on each write, and nothing else changes without a write", () => {
    fc.assert(
      fc.property(observationSequenceArb, (observations) => {
        for (const { before, result, after } of fold(observations)) {
          if (writes(result)) expect(after!.version).toBe((before?.version ?? 0) + 1);
          else expect(after).toBe(before);
          if (!result.applied && result.next !== null) expect(result.reason).toBe("conflicting-terminal");
        }
      }),
    );
  });

  // Issue #33.13: a job whose polls failed and that then settled showed the old poll error for good.
  it("a settled job carries no poll error, whatever the open job carried", () => {
    const failing = job({
      state: "running",
      lastPollError: { at: NOW - 1, message: "status API answered 503", url: null, code: null, status: 503 },
    });
    fc.assert(
      fc.property(observationSequenceArb, (observations) => {
        for (const { after } of fold(observations, failing)) {
          if (after?.settledAt !== null) expect(after?.lastPollError).toBeNull();
          else expect(after.lastPollError).toEqual(failing.lastPollError);
        }
      }),
    );
  });

  it("re-reducing the observation just applied never writes again", () => {
    fc.assert(
      fc.property(observationSequenceArb, (observations) => {
        for (const step of fold(observations)) {
          if (!step.result.applied) continue;
          const again = reduce(step.after, step.observation, { now: 9e12, unknownJobs: "adopt" });
          expect(again.next).toBeNull();
        }
      }),
    );
  });

  it("keeps the largest seq and updateTime of the applied observations", () => {
    fc.assert(
      fc.property(observationSequenceArb, (observations) => {
        const steps = fold(observations);
        const applied = steps.filter((s) => s.result.applied).map((s) => s.observation);
        const seqs = applied.flatMap((o) => (o.seq === undefined ? [] : [o.seq]));
        const times = applied.flatMap((o) => (o.updateTime === undefined ? [] : [o.updateTime]));
        const last = steps.at(-1)!.after!;
        expect(last.maxSeq).toBe(seqs.length > 0 ? Math.max(...seqs) : null);
        expect(last.maxUpdateTime).toBe(times.length > 0 ? Math.max(...times) : null);
      }),
    );
  });

  it("an unknown state never writes, whatever the job", () => {
    fc.assert(
      fc.property(observationSequenceArb, fc.string({ minLength: 1 }), (observations, state) => {
        fc.pre(rankOf(state) === -1);
        for (const step of fold(observations)) {
          const r = reduce(step.after, obs(state, { seq: 1_000 }), { now: 1, unknownJobs: "adopt" });
          expect(r).toEqual({ applied: false, reason: "unknown-state", next: null });
        }
      }),
    );
  });
});
