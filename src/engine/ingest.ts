import { boundObservation, truncatedFields } from "../core/bounded-value.js";
import { checkObservationTimes } from "../core/bounds.js";
import { FinalityError } from "../core/errors.js";
import type { IgnoreReason, Job, JobKey, Observation, UnknownJobPolicy } from "../core/model.js";
import { type Registration, reduce, register } from "../core/reducer.js";
import type { StoreTx } from "../store/store.js";
import { type EffectDefinition, effectsFor, newEffectRow } from "./effect-definitions.js";

export interface IngestContext {
  now: number;
  unknownJobs: UnknownJobPolicy;
  effects: readonly EffectDefinition[];
  newId: () => string;
  /** When a job that is open for the first time is first due for a reconcile poll. */
  firstCheckAt: (job: Job) => number | null;
}

export interface IngestOutcome {
  applied: boolean;
  reason: IgnoreReason | null;
  /** The job after the observation, or null when none exists (e.g. `unregistered`). */
  job: Job | null;
  /** True when this observation was the job's first terminal state. */
  settled: boolean;
  /** Names of the effects enqueued or run by this observation. */
  effects: string[];
}

/**
 * The one ingest path, run inside a store transaction: dedupe the delivery, load, reduce,
 * compare-and-set write, append the audit event, and on the first terminal state enqueue the
 * job's effects (and run its transactional ones). Safe to re-run after a rollback.
 */
export async function ingestInTx(
  tx: StoreTx,
  input: Observation,
  ctx: IngestContext,
): Promise<IngestOutcome> {
  // Every source passes here: an out-of-range time is refused before anything is written, and
  // an unstorable result or error is cut (and marked) rather than costing the state.
  checkObservationTimes(input);
  const obs = boundObservation(input);
  if (obs.deliveryId !== undefined && !(await tx.recordDelivery(obs.provider, obs.deliveryId, ctx.now))) {
    await appendEvent(tx, obs, ctx.now, false, "duplicate-delivery");
    return {
      applied: false,
      reason: "duplicate-delivery",
      job: await tx.getJob(obs),
      settled: false,
      effects: [],
    };
  }
  const current = await tx.getJob(obs);
  const result = reduce(current, obs, { now: ctx.now, unknownJobs: ctx.unknownJobs });
  let job = current;
  if (result.next !== null) {
    job = current === null ? withFirstCheck(result.next, ctx) : result.next;
    await writeJob(tx, current, job);
  }
  const reason = result.applied ? null : result.reason;
  await appendEvent(tx, obs, ctx.now, result.applied, reason);
  const settled = result.applied && result.settled;
  const effects = settled && job !== null ? await fireEffects(tx, job, job.state, ctx) : [];
  return { applied: result.applied, reason, job, settled, effects };
}

export interface RegisterOutcome {
  created: boolean;
  job: Job;
}

export async function registerInTx(
  tx: StoreTx,
  reg: Registration,
  ctx: IngestContext,
): Promise<RegisterOutcome> {
  const current = await tx.getJob(reg);
  const result = register(current, reg, ctx.now);
  let job = current;
  if (result.next !== null) {
    job = current === null ? withFirstCheck(result.next, ctx) : result.next;
    await writeJob(tx, current, job);
  }
  await tx.appendEvent({
    provider: reg.provider,
    id: reg.id,
    source: "api",
    rawState: null,
    state: "pending",
    applied: result.created,
    reason: result.created ? null : "already-registered",
    deliveryId: null,
    dedupeKey: null,
    at: ctx.now,
    detail: { registration: true },
  });
  if (job === null) throw new Error("unreachable: registration left no job");
  return { created: result.created, job };
}

/** Enqueues the outbox rows and runs the transactional effects for a job that reached `trigger`. */
export async function fireEffects(
  tx: StoreTx,
  job: Job,
  trigger: string,
  ctx: IngestContext,
): Promise<string[]> {
  const fired: string[] = [];
  for (const definition of effectsFor(ctx.effects, job, trigger)) {
    if (definition.transactional) {
      await definition.transactional(job, tx);
      fired.push(definition.name);
    } else if (await tx.enqueueEffect(newEffectRow(job, definition.name, trigger, ctx.newId(), ctx.now))) {
      fired.push(definition.name);
    }
  }
  return fired;
}

export async function writeJob(tx: StoreTx, current: Job | null, next: Job): Promise<void> {
  const written = current === null ? await tx.insertJob(next) : await tx.updateJob(next, current.version);
  if (!written) {
    throw new FinalityError("version-conflict", `job ${next.provider}/${next.id} changed concurrently`, {
      details: { provider: next.provider, id: next.id, expectedVersion: current?.version ?? 0 },
    });
  }
}

function withFirstCheck(job: Job, ctx: IngestContext): Job {
  return job.settledAt === null ? { ...job, nextCheckAt: ctx.firstCheckAt(job) } : job;
}

function appendEvent(
  tx: StoreTx,
  obs: Observation,
  at: number,
  applied: boolean,
  reason: IgnoreReason | null,
) {
  const key: JobKey = { provider: obs.provider, id: obs.id };
  const truncated = truncatedFields(obs);
  const detail =
    obs.seq !== undefined || obs.updateTime !== undefined || truncated.length > 0
      ? { seq: obs.seq, updateTime: obs.updateTime, ...(truncated.length > 0 ? { truncated } : {}) }
      : null;
  return tx.appendEvent({
    ...key,
    source: obs.source,
    rawState: obs.rawState ?? null,
    state: obs.state,
    applied,
    reason,
    deliveryId: obs.deliveryId ?? null,
    dedupeKey: null,
    at,
    detail,
  });
}
