import {
  type IgnoreReason,
  type Job,
  type JobKey,
  type Observation,
  UNTOUCHED_JOB,
  type UnknownJobPolicy,
} from "./model.js";
import { type CanonicalState, isCanonicalState, isTerminal, rankOf } from "./states.js";

export type ReduceResult =
  | { applied: true; next: Job; settled: boolean }
  /** `next` is set when the job is still written (e.g. the conflict flag), else null. */
  | { applied: false; reason: IgnoreReason; next: Job | null };

export interface ReduceContext {
  now: number;
  unknownJobs: UnknownJobPolicy;
}

/**
 * The one merge point: decides what an observation does to a job. Pure.
 *
 * 1. Unknown state: not applied (`unknown-state`).
 * 2. No record: create it (`adopt`) or ignore it (`registered-only` → `unregistered`).
 * 3. Current state terminal: same terminal → `duplicate`; another terminal →
 *    `conflicting-terminal` (the job is flagged); anything else → `lower-rank`.
 * 4. Lower rank than current: `lower-rank`.
 * 5. Higher rank: applied whatever its ordering key (a completion is never dropped for
 *    looking old); the largest seq and updateTime seen are kept.
 * 6. Same rank, not terminal: applied only if strictly newer (`seq` when both sides have one,
 *    else `updateTime`), else `stale`.
 */
export function reduce(job: Job | null, obs: Observation, ctx: ReduceContext): ReduceResult {
  if (!isCanonicalState(obs.state)) return { applied: false, reason: "unknown-state", next: null };
  const state: CanonicalState = obs.state;

  if (job === null) {
    if (ctx.unknownJobs === "registered-only") return { applied: false, reason: "unregistered", next: null };
    const next = adopt(obs, state, ctx.now);
    return { applied: true, next, settled: isTerminal(state) };
  }

  if (isTerminal(job.state)) {
    if (state === job.state) return { applied: false, reason: "duplicate", next: null };
    if (isTerminal(state)) {
      const next = job.conflict
        ? null
        : { ...job, conflict: true, version: job.version + 1, updatedAt: ctx.now };
      return { applied: false, reason: "conflicting-terminal", next };
    }
    return { applied: false, reason: "lower-rank", next: null };
  }

  const current = rankOf(job.state);
  const incoming = rankOf(state);
  if (incoming < current) return { applied: false, reason: "lower-rank", next: null };
  if (incoming === current && !isNewer(obs, job)) return { applied: false, reason: "stale", next: null };

  const settled = isTerminal(state);
  const next: Job = {
    ...job,
    state,
    version: job.version + 1,
    maxSeq: maxOf(job.maxSeq, obs.seq),
    maxUpdateTime: maxOf(job.maxUpdateTime, obs.updateTime),
    updatedAt: ctx.now,
    kind: job.kind ?? obs.kind ?? null,
    result: obs.result !== undefined ? obs.result : job.result,
    error: obs.error !== undefined ? obs.error : job.error,
    // A settled job is polled no more: a poll error kept from before would say it still fails.
    ...(settled
      ? { settledAt: ctx.now, settledBy: obs.source, nextCheckAt: null, stuck: false, lastPollError: null }
      : {}),
  };
  return { applied: true, next, settled };
}

/** Strictly newer by `seq` when both sides carry one, else by `updateTime`; otherwise not newer. */
function isNewer(obs: Observation, job: Job): boolean {
  if (obs.seq !== undefined && job.maxSeq !== null) return obs.seq > job.maxSeq;
  if (obs.updateTime !== undefined && job.maxUpdateTime !== null) return obs.updateTime > job.maxUpdateTime;
  return false;
}

function maxOf(current: number | null, incoming: number | undefined): number | null {
  if (incoming === undefined) return current;
  return current === null ? incoming : Math.max(current, incoming);
}

function adopt(obs: Observation, state: CanonicalState, now: number): Job {
  const settled = isTerminal(state);
  return {
    provider: obs.provider,
    id: obs.id,
    kind: obs.kind ?? null,
    state,
    version: 1,
    maxSeq: obs.seq ?? null,
    maxUpdateTime: obs.updateTime ?? null,
    submittedAt: now,
    updatedAt: now,
    settledAt: settled ? now : null,
    settledBy: settled ? obs.source : null,
    ...UNTOUCHED_JOB,
    metadata: null,
    result: obs.result ?? null,
    error: obs.error ?? null,
  };
}

export interface Registration extends JobKey {
  kind?: string | undefined;
  metadata?: unknown;
}

export type RegisterResult = { created: true; next: Job } | { created: false; next: Job | null };

/**
 * Registration is an upsert that never changes an existing state: a webhook may have adopted
 * the job first. It marks the job registered and fills kind and metadata where they are missing.
 */
export function register(job: Job | null, reg: Registration, now: number): RegisterResult {
  if (job === null) {
    const next = adopt(
      { provider: reg.provider, id: reg.id, state: "pending", source: "api" },
      "pending",
      now,
    );
    return {
      created: true,
      next: { ...next, registered: true, kind: reg.kind ?? null, metadata: reg.metadata ?? null },
    };
  }
  const kind = job.kind ?? reg.kind ?? null;
  const metadata = job.metadata ?? reg.metadata ?? null;
  if (job.registered && kind === job.kind && metadata === job.metadata) return { created: false, next: null };
  return {
    created: false,
    next: { ...job, registered: true, kind, metadata, version: job.version + 1, updatedAt: now },
  };
}
