import { type ReconcileBackoff, reconcileDelayMs } from "../core/backoff.js";
import type { Random } from "../core/clock.js";
import type { Job, JobKey } from "../core/model.js";
import type { StoreTx } from "../store/store.js";
import { fireEffects, type IngestContext, ingestInTx, writeJob } from "./ingest.js";
import type { PollResult } from "./poller.js";

export interface ReconcilePolicy extends ReconcileBackoff {
  stuckAfterMs: number;
  /** Absent for a provider with no status API (runs' mirror jobs): nothing was polled, so no poll error. */
  poller?: unknown;
}

/**
 * Records one poll's result in one transaction: the observation through the same ingest path
 * as a webhook, then the job's next check (backoff), its 404 anomaly, and its stuck flag with
 * a one-time `stuck` effect. A job that settled meanwhile is left alone.
 */
export async function recordPollInTx(
  tx: StoreTx,
  key: JobKey,
  poll: PollResult,
  ctx: IngestContext,
  policy: ReconcilePolicy,
  random: Random,
): Promise<{ job: Job | null; effectsFired: boolean }> {
  const ingested =
    poll.kind === "observed" ? await ingestInTx(tx, { ...poll.observation, source: "reconcile" }, ctx) : null;
  const effectsFired = (ingested?.effects.length ?? 0) > 0;
  const job = await tx.getJob(key);
  if (job === null || job.settledAt !== null) return { job, effectsFired };

  const hintMs =
    poll.kind === "observed"
      ? poll.suggestedIntervalMs
      : poll.kind === "failed"
        ? poll.retryAfterMs
        : undefined;
  let next: Job = {
    ...job,
    version: job.version + 1,
    updatedAt: ctx.now,
    pollAttempts: job.pollAttempts + 1,
    nextCheckAt: ctx.now + reconcileDelayMs(job.pollAttempts, policy, random, hintMs),
    // Kept until a poll gets an answer: the API, `jobs show` and the dashboard say why polls fail.
    lastPollError:
      poll.kind === "failed" && policy.poller !== undefined
        ? {
            at: ctx.now,
            message: poll.error,
            url: poll.url ?? null,
            code: poll.code ?? null,
            status: poll.status ?? null,
          }
        : null,
  };
  if (poll.kind === "not-found" && job.anomaly !== "provider-404") {
    next = { ...next, anomaly: "provider-404" };
    await tx.appendEvent({
      provider: job.provider,
      id: job.id,
      source: "reconcile",
      rawState: null,
      state: job.state,
      applied: false,
      reason: "not-found",
      deliveryId: null,
      dedupeKey: null,
      at: ctx.now,
      detail: { anomaly: "provider-404" },
    });
  }
  const becameStuck = !job.stuck && ctx.now - job.submittedAt >= policy.stuckAfterMs;
  if (becameStuck) next = { ...next, stuck: true };
  await writeJob(tx, job, next);
  const alerted = becameStuck && (await markStuck(tx, next, ctx));
  return { job: next, effectsFired: effectsFired || alerted };
}

async function markStuck(tx: StoreTx, job: Job, ctx: IngestContext): Promise<boolean> {
  // The event's dedupe key makes the alert once-only even if this runs again after a crash.
  const recorded = await tx.appendEvent({
    provider: job.provider,
    id: job.id,
    source: "reconcile",
    rawState: null,
    state: job.state,
    applied: true,
    reason: null,
    deliveryId: null,
    dedupeKey: `stuck:${job.provider}:${job.id}`,
    at: ctx.now,
    detail: { stuck: true, openForMs: ctx.now - job.submittedAt },
  });
  return recorded && (await fireEffects(tx, job, "stuck", ctx)).length > 0;
}
