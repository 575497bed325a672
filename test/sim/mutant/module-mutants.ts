import type * as Bounds from "../../../src/core/bounds.js";
import type * as WorkerEvents from "../../../src/runs/worker-event.js";

/**
 * Deliberately broken modules other than the reducer, for invariants that no reducer or store
 * mutant reaches: each replaces one export of one module of src/. Used by `npm run sim --
 * --mutant NAME` (through the module hook, mutant-hooks.ts) and by test/sim/mutant-module.test.ts
 * (through vi.mock).
 */
export const MODULE_MUTANTS = {
  /**
   * The time bound answers yes for any finite time: a generic webhook dated past 2200 (or before
   * 2000) is applied, its time cut by the ordering rule, instead of refused 400 at the edge.
   */
  "time-bounds-unchecked": {
    module: "src/core/bounds.js",
    mutate: (real: typeof Bounds): typeof Bounds => ({
      ...real,
      isTimestampInBounds: (ms: number) => Number.isFinite(ms),
    }),
  },
  /**
   * The fence forgets the lease's expiry: a worker whose lease ran out (and no sweeper recorded
   * it yet) still has its callbacks applied, while the run may go to another worker.
   */
  "fence-ignores-expiry": {
    module: "src/runs/worker-event.js",
    mutate: (real: typeof WorkerEvents): typeof WorkerEvents => ({
      ...real,
      checkFence: (run, attempt, generation, now, forHeartbeat) =>
        real.checkFence(
          run,
          attempt.leaseExpiresAt === null ? attempt : { ...attempt, leaseExpiresAt: Number.MAX_SAFE_INTEGER },
          generation,
          now,
          forHeartbeat,
        ),
    }),
  },
} as const;

export type ModuleMutantName = keyof typeof MODULE_MUTANTS;

export function isModuleMutantName(name: string | undefined): name is ModuleMutantName {
  return name !== undefined && Object.hasOwn(MODULE_MUTANTS, name);
}

/** The mutant module for `real` (the module `modulePath` names) when FINALITY_SIM_MUTANT targets it. */
export function mutateModule<T>(modulePath: string, real: T): T {
  const name = process.env.FINALITY_SIM_MUTANT;
  if (!isModuleMutantName(name) || MODULE_MUTANTS[name].module !== modulePath) return real;
  return (MODULE_MUTANTS[name].mutate as unknown as (real: T) => T)(real);
}

/**
 * `real` with each function export choosing, at every call, between the real module and the
 * mutant FINALITY_SIM_MUTANT names (for vi.mock, whose module stays loaded across the cases).
 */
export function mutantAtEachCall<T extends object>(modulePath: string, real: T): T {
  const out = { ...real } as Record<string, unknown>;
  for (const [name, value] of Object.entries(real))
    if (typeof value === "function")
      out[name] = (...args: unknown[]) =>
        (mutateModule(modulePath, real) as Record<string, (...a: unknown[]) => unknown>)[name]!(...args);
  return out as T;
}
