import type { Random } from "./clock.js";

export interface ReconcileBackoff {
  minMs: number;
  maxMs: number;
}

/**
 * Delay before the next reconcile poll of a job still open after `pollAttempts` polls:
 * full jitter between the minimum and an exponential ceiling (min · 2^attempts, capped), so
 * that many jobs registered together do not poll in lockstep. A provider's own hint (e.g.
 * Retry-After) is honoured as a floor, beyond `maxMs` if it asks for longer, but never beyond a
 * day: a job must not drop out of sight (and of the stuck check) on one odd header.
 */
export function reconcileDelayMs(
  pollAttempts: number,
  backoff: ReconcileBackoff,
  random: Random,
  hintMs?: number,
): number {
  const ceiling = Math.min(backoff.maxMs, backoff.minMs * 2 ** Math.min(pollAttempts, 40));
  const jittered = backoff.minMs + random() * Math.max(0, ceiling - backoff.minMs);
  return hintMs === undefined
    ? jittered
    : Math.max(jittered, Math.min(hintMs, Math.max(backoff.maxMs, HINT_CEILING_MS)));
}

/** The longest a provider's hint may push a reconcile check out. */
export const HINT_CEILING_MS = 24 * 3_600_000;

export interface EffectRetryPolicy {
  /** Base delays in ms for attempt 1, 2, ...; the last one repeats. */
  scheduleMs: readonly number[];
  /** Give up (dead) once the effect is older than this. */
  maxAgeMs: number;
  /** Give up after this many attempts, if set. */
  maxAttempts?: number | undefined;
}

export const DEFAULT_EFFECT_RETRY: EffectRetryPolicy = {
  scheduleMs: [5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000],
  maxAgeMs: 3 * 24 * 3_600_000,
};

type EffectRetryDecision = { kind: "retry"; delayMs: number } | { kind: "dead" };

/**
 * After failed attempt number `attempt` (1-based): retry after the scheduled delay ±20% jitter,
 * at least `retryAfterMs` when the receiver asked for it (but never past the effect's maximum
 * age: a long Retry-After gets one last attempt then, not an early death), or give up when the
 * policy is spent.
 */
export function effectRetryDecision(
  attempt: number,
  ageMs: number,
  policy: EffectRetryPolicy,
  random: Random,
  retryAfterMs?: number,
): EffectRetryDecision {
  if (policy.maxAttempts !== undefined && attempt >= policy.maxAttempts) return { kind: "dead" };
  const schedule = policy.scheduleMs;
  const base = schedule[Math.min(attempt, schedule.length) - 1] ?? schedule.at(-1) ?? 0;
  const scheduledMs = base * (0.8 + 0.4 * random());
  if (ageMs + scheduledMs > policy.maxAgeMs) return { kind: "dead" };
  const delayMs = Math.max(scheduledMs, Math.min(retryAfterMs ?? 0, policy.maxAgeMs - ageMs));
  return { kind: "retry", delayMs };
}
