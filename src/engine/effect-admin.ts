import { FinalityError } from "../core/errors.js";
import type { Effect, JobKey } from "../core/model.js";
import type { StoreTx } from "../store/store.js";
import type { Finality } from "./finality.js";
import { engineOf } from "./finality-engine.js";

/**
 * Re-arms one dead (or pending) effect to be delivered now, under its same idempotency key,
 * and records the action in the job's event log.
 */
export function retryEffect(finality: Finality, effectId: string): Promise<Effect> {
  const { store, clock, announceEffects } = engineOf(finality);
  const now = clock.now();
  return store.transaction(async (tx) => {
    const effect = await tx.getEffect(effectId);
    if (effect === null)
      throw new FinalityError("not-found", `no effect with id "${effectId}"`, { details: { effectId } });
    if (effect.status === "delivered" || effect.status === "delivering") {
      throw new FinalityError(
        "conflict",
        `effect "${effectId}" is ${effect.status}; only pending or dead effects are retried`,
        {
          details: { effectId, status: effect.status },
        },
      );
    }
    const next = rearmed(effect, now);
    await tx.updateEffect(next);
    await recordAction(tx, effect, now, "effect-retry");
    // This process's dispatcher delivers it now rather than at its next poll.
    tx.afterCommit(announceEffects);
    return next;
  });
}

/**
 * Re-sends every effect of a settled job (for a receiver that lost data) under the same
 * idempotency keys; effects in flight are left to finish. Recorded in the event log.
 */
export async function replayEffects(finality: Finality, key: JobKey): Promise<Effect[]> {
  const { store, clock, announceEffects } = engineOf(finality);
  const now = clock.now();
  const listed = await store.listEffects({ provider: key.provider, jobId: key.id, limit: 500 });
  const ids = listed.items.map((effect) => effect.id);
  return store.transaction(async (tx) => {
    const job = await tx.getJob(key);
    if (job === null)
      throw new FinalityError("not-found", `no job ${key.provider}/${key.id}`, { details: { ...key } });
    if (job.settledAt === null) {
      throw new FinalityError(
        "conflict",
        `job ${key.provider}/${key.id} has not settled; nothing to replay`,
        {
          details: { ...key, state: job.state },
        },
      );
    }
    const replayed: Effect[] = [];
    for (const id of ids) {
      const effect = await tx.getEffect(id);
      if (effect === null || effect.status === "delivering") continue;
      const next = rearmed(effect, now);
      await tx.updateEffect(next);
      await recordAction(tx, effect, now, "effect-replay");
      replayed.push(next);
    }
    if (replayed.length > 0) tx.afterCommit(announceEffects);
    return replayed;
  });
}

/**
 * Due now, with a fresh retry budget: attempts and age count from the re-arm, so that one more
 * failure is retried on the schedule instead of going straight back to dead (the job's events
 * keep the earlier count and creation time).
 */
function rearmed(effect: Effect, now: number): Effect {
  return { ...effect, status: "pending", attempts: 0, createdAt: now, nextAttemptAt: now, leaseUntil: null };
}

async function recordAction(tx: StoreTx, effect: Effect, at: number, action: string) {
  const job = await tx.getJob({ provider: effect.provider, id: effect.jobId });
  return tx.appendEvent({
    provider: effect.provider,
    id: effect.jobId,
    source: "api",
    rawState: null,
    state: job?.state ?? "unknown",
    applied: true,
    reason: null,
    deliveryId: null,
    dedupeKey: null,
    at,
    detail: {
      action,
      effect: effect.name,
      effectId: effect.id,
      previousStatus: effect.status,
      previousAttempts: effect.attempts,
      previousCreatedAt: effect.createdAt,
    },
  });
}
