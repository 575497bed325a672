import { FinalityError } from "../core/errors.js";
import type { Attempt, Run } from "../core/run-model.js";
import { type RunContext, runInTx, writeRun } from "./run-context.js";
import { claimRun } from "./run-transitions.js";

export interface ClaimRequest {
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
export function claimOnce(ctx: RunContext, request: ClaimRequest): Promise<Claimed | null> {
  return runInTx(ctx, async (tx) => {
    const now = ctx.finality.clock.now();
    const run = await tx.pickClaimableRun(request.kinds, now);
    if (run === null) return null;
    const claimed = claimRun(
      run,
      { attemptId: ctx.newId(), workerId: request.workerId, leaseMs: request.leaseMs },
      now,
    );
    await writeRun(tx, run, claimed.run);
    if (!(await tx.insertAttempt(claimed.attempt))) {
      throw new FinalityError("version-conflict", `run ${run.id} was claimed concurrently`, {
        details: { id: run.id },
      });
    }
    await tx.appendRunEvent({
      dedupeKey: `attempt:${claimed.attempt.id}:claimed`,
      runId: run.id,
      attemptId: claimed.attempt.id,
      actor: "worker",
      type: "attempt.claimed",
      at: now,
      detail: {
        workerId: request.workerId,
        generation: claimed.attempt.generation,
        leaseExpiresAt: claimed.attempt.leaseExpiresAt,
      },
    });
    return claimed;
  });
}

/**
 * Long-poll: claims at once if it can, else waits up to `waitMs`, trying again whenever a run
 * is queued in this process and every `recheckMs` in any case (runs queued elsewhere, retries
 * whose backoff ends). Null when nothing came, when `signal` aborts (the client went away) or
 * when the service shuts down.
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
    const seen = ctx.notifier.version;
    const claimed = await claimOnce(ctx, request);
    if (claimed !== null) return claimed;
    const left = deadline - performance.now();
    if (left <= 0 || signal?.aborted || ctx.notifier.closed) return null;
    await ctx.notifier.wait(Math.min(left, recheckMs), signal, seen);
  }
}
