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
 * a one-time `stuck` effect. A job that settled meanwhile is left alone. One poll is one write
 * of the job (its version goes up by one): an observation that changes the job carries the
 * poll's bookkeeping in its own write, any other poll writes the bookkeeping alone.
 */
export async function recordPollInTx(
  tx: StoreTx,
  key: JobKey,
  poll: PollResult,
  ctx: IngestContext,
  policy: ReconcilePolicy,
  random: Random,
): Promise<{ job: Job | null; effectsFired: boolean }> {
  const bookkeeping = (job: Job) => pollBookkeeping(job, poll, ctx, policy, random);
  let polled: Polled | null = null;
  const ingested =
    poll.kind === "observed"
      ? await ingestInTx(tx, { ...poll.observation, source: "reconcile" }, ctx, {
          amend: (next) => {
            if (next.settledAt !== null || !sameJob(next, key)) return next;
            polled = bookkeeping(next);
            return polled.job;
          },
        })
      : null;
  const effectsFired = (ingested?.effects.length ?? 0) > 0;
  // Set when the observation's own write carried the bookkeeping (TypeScript cannot see the
  // callback run); otherwise the bookkeeping is this poll's one write, on the job as this
  // transaction sees it (the ingest's answer, else a read).
  let done = polled as Polled | null;
  if (done === null) {
    const seen = ingested?.job;
    const job = seen != null && sameJob(seen, key) ? seen : await tx.getJob(key);
    if (job === null || job.settledAt !== null) return { job, effectsFired };
    done = bookkeeping({ ...job, version: job.version + 1, updatedAt: ctx.now });
    await writeJob(tx, job, done.job);
  }
  const { job: next, newAnomaly, becameStuck } = done;
  if (newAnomaly) {
    await tx.appendEvent({
      provider: next.provider,
      id: next.id,
      source: "reconcile",
      rawState: null,
      state: next.state,
      applied: false,
      reason: "not-found",
      deliveryId: null,
      dedupeKey: null,
      at: ctx.now,
      detail: { anomaly: "provider-404" },
    });
  }
  const alerted = becameStuck && (await markStuck(tx, next, ctx));
  return { job: next, effectsFired: effectsFired || alerted };
}

/** A job with this poll's bookkeeping, and what about it is new. */
interface Polled {
  job: Job;
  newAnomaly: boolean;
  becameStuck: boolean;
}

/** The poll's changes to an open job: its count and time, next check (backoff), last poll error, 404 anomaly and stuck flag. */
function pollBookkeeping(
  job: Job,
  poll: PollResult,
  ctx: IngestContext,
  policy: ReconcilePolicy,
  random: Random,
): Polled {
  const hintMs =
    poll.kind === "observed"
      ? poll.suggestedIntervalMs
      : poll.kind === "failed"
        ? poll.retryAfterMs
        : undefined;
  const newAnomaly = poll.kind === "not-found" && job.anomaly !== "provider-404";
  const becameStuck = !job.stuck && ctx.now - job.submittedAt >= policy.stuckAfterMs;
  const polled = policy.poller !== undefined;
  const next: Job = {
    ...job,
    pollAttempts: job.pollAttempts + 1,
    // With no status API nothing asked the provider: the job keeps the time of its last real poll.
    lastPolledAt: polled ? ctx.now : job.lastPolledAt,
    nextCheckAt: ctx.now + reconcileDelayMs(job.pollAttempts, policy, random, hintMs),
    // Kept until a poll gets an answer: the API, `jobs show` and the dashboard say why polls fail.
    lastPollError:
      poll.kind === "failed" && polled
        ? {
            at: ctx.now,
            message: poll.error,
            url: poll.url ?? null,
            code: poll.code ?? null,
            status: poll.status ?? null,
          }
        : null,
    ...(newAnomaly ? { anomaly: "provider-404" as const } : {}),
    ...(becameStuck ? { stuck: true } : {}),
  };
  return { job: next, newAnomaly, becameStuck };
}

function sameJob(job: Job, key: JobKey): boolean {
  return job.provider === key.provider && job.id === key.id;
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
