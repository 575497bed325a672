import { FinalityError } from "../core/errors.js";
import type { Attempt, Run } from "../core/run-model.js";
import {
  loadAttempt,
  type RunContext,
  runInTx,
  workerAttemptEvent,
  writeAttempt,
  writeRun,
} from "./run-context.js";
import { claimRun, releaseLease, requeueRun } from "./run-transitions.js";

interface ClaimRequest {
  workerId: string;
  /** Kinds the worker takes; null for any kind. */
  kinds: readonly string[] | null;
  leaseMs: number;
}

export interface Claimed {
  run: Run;
  attempt: Attempt;
}

/**
 * Claims the oldest claimable run in one write transaction: pick (locked), bump its generation,
 * insert the attempt with its lease, record the claim. Null when nothing is claimable. The
 * mirror job is not touched: queued and dispatching both show as `pending`.
 */
function claimOnce(ctx: RunContext, request: ClaimRequest, signal?: AbortSignal): Promise<Claimed | null> {
  return runInTx(ctx, async (tx) => {
    // Looked at again inside the transaction: a client gone by now must not take a run.
    if (signal?.aborted) return null;
    const now = ctx.finality.clock.now();
    const run = await tx.pickClaimableRun(request.kinds, now);
    if (run === null) return null;
    const claimed = claimRun(
      run,
      { attemptId: ctx.newId(), workerId: request.workerId, leaseMs: request.leaseMs },
      now,
    );
    // Three writes that need nothing of each other's answers, and the claim's last: sent together,
    // the COMMIT with them (on PostgreSQL, one round trip for the three and the COMMIT). Any
    // failure rolls the transaction back, whichever came first.
    const [, inserted] = await Promise.all([
      writeRun(tx, run, claimed.run, "beside"),
      tx.insertAttempt(claimed.attempt, "beside"),
      tx.appendRunEvent(
        workerAttemptEvent(claimed.attempt, "claimed", "attempt.claimed", now, {
          workerId: request.workerId,
          generation: claimed.attempt.generation,
          leaseExpiresAt: claimed.attempt.leaseExpiresAt,
        }),
        "last",
      ),
    ]);
    if (!inserted) {
      throw new FinalityError("version-conflict", `run ${run.id} was claimed concurrently`, {
        details: { id: run.id },
      });
    }
    return claimed;
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
 * if the attempt has moved on meanwhile (a worker cannot have it: its answer was never sent).
 */
async function withdrawClaim(ctx: RunContext, claimed: Claimed): Promise<void> {
  await runInTx(ctx, async (tx, effects) => {
    const loaded = await loadAttempt(tx, claimed.attempt.id);
    if (loaded === null) return;
    const { attempt, run } = loaded;
    const holds =
      attempt.status === "claimed" && run.status === "dispatching" && run.generation === attempt.generation;
    if (!holds) return;
    const now = ctx.finality.clock.now();
    await writeAttempt(tx, attempt, releaseLease(attempt, "released", now));
    // Dispatching and queued both show as `pending` on the mirror job: nothing to ingest.
    await writeRun(tx, run, {
      ...requeueRun(run, now, now),
      attemptCount: Math.max(0, run.attemptCount - 1),
    });
    await tx.appendRunEvent(
      workerAttemptEvent(attempt, "withdrawn", "attempt.withdrawn", now, {
        workerId: attempt.workerId,
        generation: attempt.generation,
        reason: "client-gone",
      }),
    );
    effects.runQueued = true;
  });
}
