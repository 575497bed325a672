import { afterEach } from "vitest";
import { manualClock } from "../../src/core/clock.js";
import { isFinalityError } from "../../src/core/errors.js";
import { RUNS_PROVIDER } from "../../src/core/run-model.js";
import { createFinality } from "../../src/engine/create-finality.js";
import type { Finality } from "../../src/engine/finality.js";
import { createRunService, type RunService, type RunServiceOptions } from "../../src/runs/run-service.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { engineOf } from "../helpers/engine.js";
import { tempDir } from "../helpers/temp-dir.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

export interface Engine {
  finality: Finality;
  runs: RunService;
  clock: ReturnType<typeof manualClock>;
  file: string;
}

/** A ledger on a fresh SQLite file with a manual clock, and the runs service over it. */
export function openEngine(options: Partial<Omit<RunServiceOptions, "finality">> = {}): Engine {
  const dir = tempDir("finality-runs-");
  cleanups.push(() => dir.cleanup());
  const clock = manualClock();
  const file = dir.file("ledger.db");
  const finality = openLedger(file, clock);
  const runs = createRunService({ finality, random: () => 0.5, retry: { baseDelayMs: 1_000 }, ...options });
  return { finality, runs, clock, file };
}

/** Another connection (another store, as another process would have) on the same file. */
export function openLedger(file: string, clock: ReturnType<typeof manualClock>): Finality {
  const finality = createFinality({
    store: createSqliteStore({ path: file }),
    clock,
    // Configured providers must not lock out the reserved `runs` one.
    providers: { generic: {} },
    effects: [{ name: "notify", handler: async () => {} }],
  });
  cleanups.push(() => finality.close());
  return finality;
}

/** The FinalityError code a promise rejects with (and its reason), or "resolved". */
export async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return "resolved";
  } catch (error) {
    if (!isFinalityError(error)) throw error;
    const reason = error.details.reason;
    return typeof reason === "string" ? `${error.code}:${reason}` : error.code;
  }
}

/** Everything the ledger holds about one run, read through the port, for before/after comparisons. */
export async function runSnapshot(engine: Engine, runId: string) {
  const store = engineOf(engine.finality).store;
  return {
    run: await store.getRun(runId),
    attempts: await store.runAttempts(runId),
    events: await store.runEvents(runId),
    job: await store.getJob({ provider: RUNS_PROVIDER, id: runId }),
    jobEvents: await store.jobEvents({ provider: RUNS_PROVIDER, id: runId }),
    effects: (await store.listEffects({ provider: RUNS_PROVIDER, jobId: runId })).items,
  };
}

/** Enqueues, claims and reports `started`: a run in the hands of a worker. */
export async function runningRun(
  engine: Engine,
  options: { kind?: string; maxAttempts?: number; leaseSeconds?: number } = {},
) {
  const kind = options.kind ?? "render";
  const { run } = await engine.runs.enqueue({ kind, maxAttempts: options.maxAttempts ?? 3 });
  const claimed = await engine.runs.claim({
    workerId: "w1",
    kinds: [kind],
    leaseSeconds: options.leaseSeconds ?? 30,
  });
  if (claimed === null || claimed.run.id !== run.id)
    throw new Error("expected to claim the run just enqueued");
  await engine.runs.recordEvent(claimed.attempt.id, {
    generation: claimed.attempt.generation,
    sequence: 1,
    type: "started",
  });
  return claimed;
}
