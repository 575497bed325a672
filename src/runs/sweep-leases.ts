import type { StoreTx } from "../store/store.js";
import { expireLease, LEASE_EXPIRY_OUTCOMES, type LeaseExpiryOutcome } from "./lease-expiry-rules.js";
import {
  appendEachRunEvent,
  loadAttempt,
  type RunContext,
  retryDelayFor,
  runInTx,
  type TxSideEffects,
  writeAttempt,
  writeRunChange,
} from "./run-context.js";

/**
 * Expires one attempt's lease if its time has come, in the caller's transaction: reload run and
 * attempt (a sweep decided on an older read must decide again), decide (pure), then write with
 * compare-and-set on both versions, append the deduplicated events and feed the mirror job.
 * Used by the sweeper, and by a heartbeat or callback that finds its own lease past expiry.
 */
export async function expireInTx(
  tx: StoreTx,
  ctx: RunContext,
  attemptId: string,
  effects: TxSideEffects,
): Promise<LeaseExpiryOutcome | "missing"> {
  const loaded = await loadAttempt(tx, attemptId);
  if (loaded === null) return "missing";
  const { attempt, run } = loaded;
  const now = ctx.finality.clock.now();
  const change = expireLease(run, attempt, now, retryDelayFor(ctx, run), ctx.maxUnstartedReleases);
  if (change.attempt !== null) await writeAttempt(tx, attempt, change.attempt);
  if (change.run !== null) await writeRunChange(tx, ctx, run, change.run, "lease", effects);
  await appendEachRunEvent(tx, change.events);
  return change.outcome;
}

export type SweepCounts = Record<LeaseExpiryOutcome | "missing", number>;

/**
 * One sweep: every lease due at `now` (at most `limit`), one transaction each. Safe to run
 * twice, or in several processes at once: each transaction decides on what it reads inside
 * itself, and the events' dedupe keys make a repeated expiry record nothing.
 */
export async function sweepLeases(ctx: RunContext, limit: number): Promise<SweepCounts> {
  const counts = Object.fromEntries([...LEASE_EXPIRY_OUTCOMES, "missing"].map((o) => [o, 0])) as SweepCounts;
  const due = await ctx.finality.store.dueLeases(ctx.finality.clock.now(), limit);
  // Issued together: the SQLite store commits them as one group, PostgreSQL spreads them over
  // its pool; each is still its own transaction.
  const outcomes = await Promise.all(
    due.map((lease) => runInTx(ctx, (tx, effects) => expireInTx(tx, ctx, lease.attemptId, effects))),
  );
  for (const outcome of outcomes) counts[outcome] += 1;
  return counts;
}
