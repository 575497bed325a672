import type { RunService } from "../../../src/runs/run-service.js";

/**
 * Deliberately broken wiring between the edge and the run service, for the invariant no store or
 * module mutant reaches without breaking more than its one defect. Picked by FINALITY_SIM_MUTANT
 * (`npm run sim -- --mutant NAME`, or test/sim/mutant-store.test.ts); sim-process.ts applies it.
 */
export const PROCESS_MUTANTS = {
  /**
   * The claim route forgets to hand the request's signal to the claim (`signal: request.signal`
   * left out): a worker that went away still gets a run, which then waits out its lease. Without a
   * signal the claim would wait its whole `waitSeconds` in real time when nothing is queued; the
   * mutant asks for no wait, which changes nothing else (nothing is queued meanwhile in a step).
   */
  "claim-deaf-to-abort": {
    runs: (runs: RunService): Partial<RunService> => ({
      claim: (request) => runs.claim({ ...request, signal: undefined, waitSeconds: 0 }),
    }),
  },
  /**
   * A worker's end sent again (its first answer lost) claims the worker's next run anew, instead
   * of answering the claim its first call made: each lost answer strands a run to its lease.
   */
  "retried-end-claims-anew": {
    runs: (runs: RunService): Partial<RunService> => ({
      async recordEvent(attemptId, event, scope, next) {
        const result = await runs.recordEvent(attemptId, event, scope, next);
        if (next === undefined || result.outcome !== "duplicate") return result;
        const fresh = await runs.claim({ ...next, workerId: result.attempt.workerId });
        return { ...result, next: fresh ?? result.next ?? null };
      },
    }),
  },
} as const;

export type ProcessMutantName = keyof typeof PROCESS_MUTANTS;

export function isProcessMutantName(name: string | undefined): name is ProcessMutantName {
  return name !== undefined && Object.hasOwn(PROCESS_MUTANTS, name);
}

/** `runs` with the mutant named by FINALITY_SIM_MUTANT, if it names a process mutant. */
export function mutateRuns(runs: RunService, name = process.env.FINALITY_SIM_MUTANT): RunService {
  if (!isProcessMutantName(name)) return runs;
  return { ...runs, ...PROCESS_MUTANTS[name].runs(runs) };
}
