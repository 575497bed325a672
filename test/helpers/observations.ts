import fc from "fast-check";
import type { Job, Observation } from "../../src/core/model.js";
import { type ReduceContext, type ReduceResult, reduce } from "../../src/core/reducer.js";
import { CANONICAL_STATES, type CanonicalState, SOURCES } from "../../src/core/states.js";

export const JOB = { provider: "generic", id: "job-1" } as const;

/** One observation of JOB: any canonical state, optional seq/updateTime from small ranges so that ties happen. */
export const observationArb: fc.Arbitrary<Observation> = fc.record(
  {
    provider: fc.constant(JOB.provider),
    id: fc.constant(JOB.id),
    state: fc.constantFrom<CanonicalState>(...CANONICAL_STATES),
    source: fc.constantFrom(...SOURCES),
    seq: fc.integer({ min: 0, max: 6 }),
    updateTime: fc.integer({ min: 0, max: 6 }).map((n) => 1_000 * n),
  },
  { requiredKeys: ["provider", "id", "state", "source"] },
);

/** A sequence of observations drawn (with repeats) from a small pool, so that exact duplicates occur. */
export const observationSequenceArb: fc.Arbitrary<Observation[]> = fc
  .array(observationArb, { minLength: 1, maxLength: 8 })
  .chain((pool) =>
    fc.array(
      fc.nat({ max: pool.length - 1 }).map((i) => pool[i]!),
      { minLength: 1, maxLength: 30 },
    ),
  );

export interface Step {
  observation: Observation;
  before: Job | null;
  result: ReduceResult;
  /** The job as a store would hold it after this step. */
  after: Job | null;
}

/** Folds observations through the reducer like ingest does: write `next` when it is set. */
export function fold(
  observations: readonly Observation[],
  start: Job | null = null,
  ctx: Partial<ReduceContext> = {},
): Step[] {
  const steps: Step[] = [];
  let job = start;
  let now = ctx.now ?? 1_000_000;
  for (const observation of observations) {
    now += 1;
    const result = reduce(job, observation, { now, unknownJobs: ctx.unknownJobs ?? "adopt" });
    const after = result.next ?? job;
    steps.push({ observation, before: job, result, after });
    job = after;
  }
  return steps;
}

export function finalJob(observations: readonly Observation[], start: Job | null = null): Job | null {
  return fold(observations, start).at(-1)?.after ?? start;
}

/** Every ordering of a small array (n! of them: keep n small). */
export function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [items.slice()];
  const out: T[][] = [];
  items.forEach((item, i) => {
    const rest = [...items.slice(0, i), ...items.slice(i + 1)];
    for (const perm of permutations(rest)) out.push([item, ...perm]);
  });
  return out;
}
