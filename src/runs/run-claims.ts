import { FinalityError } from "../core/errors.js";
import { inSendingOrder } from "../core/in-sending-order.js";
import type { Attempt, NewRunEvent, Run } from "../core/run-model.js";
import type { WriteEnd } from "../store/run-store.js";
import type { StoreTx } from "../store/store.js";
import {
  loadAttempt,
  type RunContext,
  runInTx,
  type TxSideEffects,
  workerAttemptEvent,
  writeAttempt,
  writeRun,
  writeRunChange,
} from "./run-context.js";
import { claimRun, releaseLease, requeueRun, settleRun } from "./run-transitions.js";
import { applyWorkerEvent } from "./worker-event.js";

interface ClaimRequest {
  workerId: string;
  /** Kinds the worker takes; null for any kind. */
  kinds: readonly string[] | null;
  leaseMs: number;
  /**
   * The worker starts the run as soon as it has it: the claim also records its `started`, so
   * the run is `running` when the claim answers and the worker sends no `started` of its own.
   * One call and one transaction fewer per run. It takes no sequence: the worker numbers its
   * reports as it likes.
   */
  start: boolean;
}

export interface Claimed {
  run: Run;
  attempt: Attempt;
}

/**
 * Claims the oldest claimable run in one write transaction: pick (locked), bump its generation,
 * insert the attempt with its lease, record the claim. Null when nothing is claimable.
 */
function claimOnce(ctx: RunContext, request: ClaimRequest, signal?: AbortSignal): Promise<Claimed | null> {
  return runInTx(ctx, async (tx, effects) => {
    // Looked at again inside the transaction: a client gone by now must not take a run.
    if (signal?.aborted) return null;
    return claimInTx(ctx, tx, effects, request, ctx.finality.clock.now());
  });
}

/**
 * A claim in the caller's transaction, its writes the last the transaction sends (a claim on its
 * own, or the one a worker's end asks for with it). The mirror job is not touched (queued and
 * dispatching both show as `pending`), unless the claim starts the run too (`start`): then the
 * worker's `started` is recorded with it and the mirror job moves to `running`, as the worker's
 * own `started` would have moved it. `alsoRecord`: the caller's event, told what was claimed (a
 * worker's end: its event names the attempt claimed with it). It is recorded first, in the same
 * statement as the claim's own events (one write: `appendRunEvents`), which go out with the
 * claim's other writes and the COMMIT; alone, as the last write, when nothing was claimed.
 */
export async function claimInTx(
  ctx: RunContext,
  tx: StoreTx,
  effects: TxSideEffects,
  request: ClaimRequest,
  now: number,
  alsoRecord?: (claimed: Claimed | null) => NewRunEvent,
): Promise<Claimed | null> {
  const run = await tx.pickClaimableRun(request.kinds, now);
  if (run === null) {
    if (alsoRecord !== undefined) await recordAll(tx, [alsoRecord(null)], "last");
    return null;
  }
  const claimed = claimRun(
    run,
    { attemptId: ctx.newId(), workerId: request.workerId, leaseMs: request.leaseMs },
    now,
  );
  const claimedEvent = workerAttemptEvent(claimed.attempt, "claimed", "attempt.claimed", now, {
    workerId: request.workerId,
    generation: claimed.attempt.generation,
    leaseExpiresAt: claimed.attempt.leaseExpiresAt,
  });
  // The caller's event ahead of the claim's: the audit trail reads the end, then the next claim.
  const alsoEvents = (claimed: Claimed) => (alsoRecord === undefined ? [] : [alsoRecord(claimed)]);
  // Writes that need nothing of each other's answers, and the claim's last: sent together, the
  // COMMIT with them (on PostgreSQL, one round trip for them and the COMMIT). Any failure rolls
  // the transaction back, whichever came first.
  if (!request.start) {
    const [, inserted] = await inSendingOrder([
      writeRun(tx, run, claimed.run, "beside"),
      tx.insertAttempt(claimed.attempt, "beside"),
      recordAll(tx, [...alsoEvents(claimed), claimedEvent], "last"),
    ]);
    if (!inserted) throw claimedConcurrently(run.id);
    return claimed;
  }
  const started = applyWorkerEvent(
    claimed.run,
    claimed.attempt,
    { generation: claimed.attempt.generation, sequence: 0, type: "started" },
    now,
    0,
  );
  // No sequence of the worker's is used up (nor recorded under its key): the worker numbers its
  // reports as it likes, and its own sequence 0 is judged like any other, not as a duplicate.
  const startedAttempt = { ...started.attempt, lastSequence: null };
  const startedRun = started.run ?? claimed.run;
  const startedClaim = { run: startedRun, attempt: startedAttempt };
  const startedEvent = workerAttemptEvent(claimed.attempt, "claim-started", "worker.started", now, {
    generation: claimed.attempt.generation,
    applied: true,
    withClaim: true,
  });
  const [inserted] = await inSendingOrder([
    tx.insertAttempt(startedAttempt, "beside"),
    recordAll(tx, [...alsoEvents(startedClaim), claimedEvent, startedEvent], "beside"),
    writeRunChange(tx, ctx, run, startedRun, "worker", effects, true),
  ]);
  if (!inserted) throw claimedConcurrently(run.id);
  return startedClaim;
}

/**
 * The claim's events and the caller's, as one write (`appendRunEvents`). Its false wrote none of
 * them (all or nothing), and a claim must not commit without its events: the work runs again, as
 * it does when PostgreSQL fails the transaction instead (`end`: the COMMIT went out behind them).
 * A used key is a concurrent writer's: the claim's keys name an attempt just made, and a worker's
 * end looked its own up under the attempt's lock.
 */
async function recordAll(tx: StoreTx, events: readonly NewRunEvent[], end: WriteEnd): Promise<void> {
  if (await tx.appendRunEvents(events, end)) return;
  const ids = [...new Set(events.map((event) => event.runId))];
  throw new FinalityError("version-conflict", `events of run ${ids.join(", ")} recorded concurrently`, {
    details: { ids },
  });
}

function claimedConcurrently(runId: string): FinalityError {
  return new FinalityError("version-conflict", `run ${runId} was claimed concurrently`, {
    details: { id: runId },
  });
}

/**
 * Long-poll: claims at once if it can, else waits up to `waitMs`, trying again whenever a run
 * is queued in this process and every `recheckMs` in any case (runs queued elsewhere, retries
 * whose backoff ends). Null when nothing came, when `signal` aborts (the client went away) or
 * when the service shuts down.
 *
 * An aborted claim claims nothing: the abort wakes the wait, and the loop looks at the signal
 * before it claims (it used to claim first, and the run then sat with a client that was gone
 * until its lease ran out). A claim whose client leaves while it commits is given back at once.
 */
export async function claimWithin(
  ctx: RunContext,
  request: ClaimRequest,
  waitMs: number,
  recheckMs: number,
  signal?: AbortSignal,
): Promise<Claimed | null> {
  const deadline = performance.now() + waitMs;
  for (;;) {
    if (signal?.aborted) return null;
    const seen = ctx.notifier.version;
    const claimed = await claimUnlessAborted(ctx, request, signal);
    if (claimed !== null || signal?.aborted) return claimed;
    const left = deadline - performance.now();
    if (left <= 0 || ctx.notifier.closed) return null;
    await ctx.notifier.wait(Math.min(left, recheckMs), signal, seen);
  }
}

/**
 * One claim for a client that may go away: nothing when `signal` has aborted, and a claim that
 * committed while it aborted is withdrawn (its answer would never reach the client).
 */
export async function claimUnlessAborted(
  ctx: RunContext,
  request: ClaimRequest,
  signal?: AbortSignal,
): Promise<Claimed | null> {
  if (signal?.aborted) return null;
  const claimed = await claimOnce(ctx, request, signal);
  if (claimed === null || !signal?.aborted) return claimed;
  await withdrawClaim(ctx, claimed);
  return null;
}

/**
 * Gives back a claim its client will never receive (it went away while the claim committed):
 * the attempt is `released`, the run queued again at once with the attempt refunded, as when a
 * lease runs out before the first heartbeat — without waiting for that lease. Changes nothing
 * if the attempt has moved on meanwhile (its version is not the claim's: a worker cannot have
 * moved it, its answer was never sent, but a sweep may have). A claim that started the run is
 * given back the same way: the worker never had it. A cancel asked for since the claim
 * committed ends the run `cancelled` instead: a queued run with a cancel pending is never
 * claimed again, and no worker will ever acknowledge it.
 */
export async function withdrawClaim(ctx: RunContext, claimed: Claimed): Promise<void> {
  await runInTx(ctx, async (tx, effects) => {
    const loaded = await loadAttempt(tx, claimed.attempt.id);
    if (loaded === null) return;
    const { attempt, run } = loaded;
    const holds =
      attempt.version === claimed.attempt.version &&
      run.generation === attempt.generation &&
      (run.status === "dispatching" || run.status === "running");
    if (!holds) return;
    const now = ctx.finality.clock.now();
    await writeAttempt(tx, attempt, releaseLease(attempt, "released", now));
    // Dispatching and queued both show as `pending` on the mirror job: nothing to ingest. A run
    // the claim started goes back to `queued`; its mirror stays `running`, as for any retry. A
    // cancelled run's mirror settles with it.
    const next = run.cancelRequested
      ? settleRun(run, "cancelled", now, { error: { code: "CANCELLED", message: "cancel requested" } })
      : { ...requeueRun(run, now, now), attemptCount: Math.max(0, run.attemptCount - 1) };
    await writeRunChange(tx, ctx, run, next, "worker", effects);
    await tx.appendRunEvent(
      workerAttemptEvent(attempt, "withdrawn", "attempt.withdrawn", now, {
        workerId: attempt.workerId,
        generation: attempt.generation,
        reason: "client-gone",
        runStatus: next.status,
      }),
    );
    if (next.status === "cancelled")
      await tx.appendRunEvent(
        workerAttemptEvent(attempt, "withdrawn-cancelled", "run.cancelled", now, { runStatus: "cancelled" }),
      );
  });
}
