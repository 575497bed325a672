import type { Random } from "../core/clock.js";
import { FinalityError } from "../core/errors.js";
import { inSendingOrder } from "../core/in-sending-order.js";
import { type Attempt, canonicalOf, type NewRunEvent, RUNS_PROVIDER, type Run } from "../core/run-model.js";
import type { Source } from "../core/states.js";
import type { FinalityEngine } from "../engine/finality-engine.js";
import { ingestInTx } from "../engine/ingest.js";
import { currentTraceParent } from "../engine/tracing.js";
import type { WriteEnd } from "../store/run-store.js";
import type { StoreTx } from "../store/store.js";
import type { RunNotifier } from "./run-notifier.js";
import { type RunRetryPolicy, runRetryDelayMs } from "./run-transitions.js";

/** What the run operations share: the ledger, time, randomness and the in-process wake-ups. */
export interface RunContext {
  finality: FinalityEngine;
  random: Random;
  retry: RunRetryPolicy;
  notifier: RunNotifier;
  newId: () => string;
  /** Lease expiries before a worker's first heartbeat a run survives (see decideLeaseExpiry). */
  maxUnstartedReleases: number;
}

/** What one run transaction did besides its answer, acted on after it commits. */
export interface TxSideEffects {
  /** The mirror job enqueued outbox rows: wake the dispatcher. */
  effectsEnqueued: boolean;
  /** A run became claimable: wake waiting claims. */
  runQueued: boolean;
  /**
   * The span the transaction was asked for under (a worker's callback), taken before it: the
   * mirror job's effects store it, so their deliveries continue that trace.
   */
  traceParent?: string | null;
}

const noSideEffects = (): TxSideEffects => ({ effectsEnqueued: false, runQueued: false });

/** The wake-ups a run transaction asked for; given to `tx.afterCommit`, so run only once it committed. */
function wake(ctx: RunContext, effects: TxSideEffects): void {
  if (effects.effectsEnqueued) ctx.finality.announceEffects();
  if (effects.runQueued) ctx.notifier.notify();
}

/**
 * Runs `work` in one store transaction and acts on its side effects once it has committed.
 * Each run of `work` has side effects of its own: a run rolled back after a version conflict
 * leaves no wake-up behind (its afterCommit callback goes with it).
 */
export function runInTx<T>(
  ctx: RunContext,
  work: (tx: StoreTx, effects: TxSideEffects) => Promise<T>,
): Promise<T> {
  const traceParent = currentTraceParent();
  return ctx.finality.store.transaction(async (tx) => {
    const effects = noSideEffects();
    effects.traceParent = traceParent;
    const result = await work(tx, effects);
    // Registered once `work` has resolved: the flags are final by then.
    tx.afterCommit(() => wake(ctx, effects));
    return result;
  });
}

export function retryDelayFor(ctx: RunContext, run: Run): number {
  return runRetryDelayMs(run.attemptCount, ctx.retry, ctx.random);
}

/**
 * CAS write of a run; a lost race throws `version-conflict`, which re-runs the whole work (`end`:
 * RunStoreTx's, where the write stands in the work).
 */
export async function writeRun(tx: StoreTx, before: Run, after: Run, end?: WriteEnd): Promise<void> {
  if (!(await tx.updateRun(after, before.version, end, before))) {
    throw new FinalityError("version-conflict", `run ${after.id} changed concurrently`, {
      details: { id: after.id, expectedVersion: before.version },
    });
  }
}

export async function writeAttempt(
  tx: StoreTx,
  before: Attempt,
  after: Attempt,
  end?: WriteEnd,
): Promise<void> {
  if (!(await tx.updateAttempt(after, before.version, end, before))) {
    throw new FinalityError("version-conflict", `attempt ${after.id} changed concurrently`, {
      details: { id: after.id, expectedVersion: before.version },
    });
  }
}

/**
 * An attempt and its run, read (and locked, attempt first) in the caller's transaction, asked
 * together (PostgreSQL: one round trip, with BEGIN); null when either is gone.
 */
export async function loadAttempt(
  tx: StoreTx,
  attemptId: string,
): Promise<{ attempt: Attempt; run: Run } | null> {
  const [attempt, run] = await Promise.all([tx.getAttempt(attemptId), tx.getRunOfAttempt(attemptId)]);
  return attempt === null || run === null ? null : { attempt, run };
}

/** The dedupe key of an attempt's event for `step` (see workerAttemptEvent). */
export const attemptEventKey = (attemptId: string, step: string) => `attempt:${attemptId}:${step}`;

/**
 * An event a worker's call records on its attempt, keyed `attempt:<id>:<step>`: the same call
 * made again (a retried request) records nothing.
 */
export function workerAttemptEvent(
  attempt: Attempt,
  step: string,
  type: string,
  at: number,
  detail: Record<string, unknown>,
): NewRunEvent {
  return {
    dedupeKey: attemptEventKey(attempt.id, step),
    runId: attempt.runId,
    attemptId: attempt.id,
    actor: "worker",
    type,
    at,
    detail,
  };
}

/**
 * Each event on its own, one whose key was used skipped (a lease expiry's: the dedupe keys make a
 * repeated expiry record nothing). Not `StoreTx.appendRunEvents`, which is all or nothing.
 */
export async function appendEachRunEvent(tx: StoreTx, events: readonly NewRunEvent[]): Promise<void> {
  for (const event of events) await tx.appendRunEvent(event);
}

/**
 * Writes a run's change (CAS, as `writeRun`), and wakes waiting claims after commit when the run
 * is claimable again. When the canonical picture changes, the change is fed into the run's
 * mirror job (provider `runs`, same id) through the one ingest path, in the same transaction.
 * The reducer keeps the mirror monotonic: a retried run goes back to `queued` here but stays
 * `running` there (the observation is recorded as `lower-rank`) until its final state, whose
 * first arrival enqueues the job's effects exactly as for any provider's job.
 *
 * `endsWork`: the caller sends nothing after this change (nor beside it but writes marked
 * `beside`), so the run's write, or the mirror's last statement with the run's write beside it,
 * may carry the COMMIT (RunStoreTx's `end`). `"at-once"`: the work goes on after it, but the
 * mirror's ingest may still be the store's one checked statement (ingestInTx's `atOnceWithin`),
 * sparing the read's round trip; a found-more-to-do runs the whole work again the ordinary way.
 */
export async function writeRunChange(
  tx: StoreTx,
  ctx: RunContext,
  before: Run,
  after: Run,
  source: Source,
  effects: TxSideEffects,
  endsWork: boolean | "at-once" = false,
): Promise<void> {
  if (after.status === "queued") effects.runQueued = true;
  if (canonicalOf(before.status) === canonicalOf(after.status)) {
    await writeRun(tx, before, after, endsWork === true ? "last" : undefined);
    return;
  }
  const now = ctx.finality.clock.now();
  // The run's write and its mirror's ingest need nothing of each other: sent together.
  const [, outcome] = await inSendingOrder([
    writeRun(tx, before, after, endsWork === true ? "beside" : undefined),
    ingestInTx(
      tx,
      {
        provider: RUNS_PROVIDER,
        id: after.id,
        kind: after.kind,
        state: canonicalOf(after.status),
        rawState: after.status,
        source,
        // The run's version orders the mirror's same-rank updates (a retry's second `running`).
        seq: after.version,
        ...(after.settledAt !== null && after.output !== null ? { result: after.output } : {}),
        ...(after.settledAt !== null && after.error !== null ? { error: after.error } : {}),
      },
      { ...ctx.finality.contextFor(RUNS_PROVIDER, now), traceParent: effects.traceParent ?? null },
      // Only the outcome's effects are read here: the store may leave the job out of its answer.
      { endsTransaction: endsWork === true, atOnceWithin: endsWork === "at-once", withoutJob: true },
    ),
  ]);
  if (outcome.effects.length > 0) effects.effectsEnqueued = true;
}
