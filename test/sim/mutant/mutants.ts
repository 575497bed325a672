import type { Job, Observation } from "../../../src/core/model.js";
import type { ReduceContext, ReduceResult } from "../../../src/core/reducer.js";
import { isTerminal } from "../../../src/core/states.js";

type Reduce = (job: Job | null, obs: Observation, ctx: ReduceContext) => ReduceResult;

/**
 * Deliberately broken reducers, to show that the simulator catches a broken core. Used only by
 * `npm run sim -- --mutant NAME` (through a module hook) and by the mutant test (through vi.mock).
 */
export const MUTANTS = {
  /** A `running` observation overwrites a terminal state (the regression Finality exists to stop). */
  "running-overwrites-terminal":
    (real: Reduce): Reduce =>
    (job, obs, ctx) => {
      if (job !== null && isTerminal(job.state) && obs.state === "running") {
        const next: Job = { ...job, state: "running", version: job.version + 1, updatedAt: ctx.now };
        return { applied: true, next, settled: false };
      }
      return real(job, obs, ctx);
    },
  /** A completion whose `seq` looks older than what was seen is dropped (rule 5 broken). */
  "old-completion-dropped":
    (real: Reduce): Reduce =>
    (job, obs, ctx) => {
      const older = obs.seq !== undefined && job?.maxSeq != null && obs.seq < job.maxSeq;
      if (job !== null && !isTerminal(job.state) && isTerminal(obs.state) && older)
        return { applied: false, reason: "stale", next: null };
      return real(job, obs, ctx);
    },
  /** A provider's `cancelled` is read as `failed` (a state mapping gone wrong): the job settles wrong. */
  "cancelled-read-as-failed":
    (real: Reduce): Reduce =>
    (job, obs, ctx) =>
      real(job, obs.state === "cancelled" ? { ...obs, state: "failed" } : obs, ctx),
  /** A completion's result is not kept: the job settles `succeeded` with nothing to show for it. */
  "result-dropped":
    (real: Reduce): Reduce =>
    (job, obs, ctx) => {
      const out = real(job, obs, ctx);
      if (!out.applied || out.next.state !== "succeeded") return out;
      return { ...out, next: { ...out.next, result: null } };
    },
  /** A webhook reporting `failed` throws out of the reducer: the sender is answered 500. */
  "webhook-failed-throws":
    (real: Reduce): Reduce =>
    (job, obs, ctx) => {
      if (obs.source === "webhook" && obs.state === "failed") throw new Error("unexpected state");
      return real(job, obs, ctx);
    },
} as const satisfies Record<string, (real: Reduce) => Reduce>;

export type MutantName = keyof typeof MUTANTS;

export function isMutantName(name: string): name is MutantName {
  return Object.hasOwn(MUTANTS, name);
}
