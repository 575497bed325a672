import { boundObservation, truncatedFields } from "../core/bounded-value.js";
import { FinalityError } from "../core/errors.js";
import { inSendingOrder } from "../core/in-sending-order.js";
import type { Effect, IgnoreReason, Job, JobEvent, Observation, UnknownJobPolicy } from "../core/model.js";
import { DEFAULT_MAX_CLOCK_SKEW_MS, orderingTimeOf, type TimeAdjustment } from "../core/ordering-time.js";
import { type Registration, reduce, register } from "../core/reducer.js";
import { isCanonicalState, isTerminal } from "../core/states.js";
import type { ParkedObservation, Tombstone } from "../store/lifecycle-store.js";
import type { IngestLoad, JobWritten, StoreTx } from "../store/store.js";
import {
  claimedOnEnqueue,
  type EffectDefinition,
  effectsFor,
  effectsForAnyKind,
  newEffectRow,
} from "./effect-definitions.js";
import type { EffectHandoff } from "./effect-handoff.js";

export interface IngestContext {
  now: number;
  unknownJobs: UnknownJobPolicy;
  effects: readonly EffectDefinition[];
  newId: () => string;
  /** When a job that is open for the first time is first due for a reconcile poll. */
  firstCheckAt: (job: Job) => number | null;
  /** The span the transaction runs under, as a traceparent, stored with each effect it enqueues. */
  traceParent?: string | null;
  /**
   * How far ahead of `now` an observation's `updateTime` may be and still order it
   * (`ingest.maxClockSkewSeconds`; default `DEFAULT_MAX_CLOCK_SKEW_MS`).
   */
  maxClockSkewMs?: number;
  /** The provider's reason a job could not be polled (ProviderPolicy.unpollable); registration refuses it. */
  unpollable?: (id: string, kind: string | null) => string | null;
  /** A dispatcher in this process that takes the effects enqueued here, claimed, as they commit. */
  handoff?: EffectHandoff;
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
 *
 * Two answers come from around the reducer: a job retention deleted is answered by its tombstone
 * (`already-settled-pruned`: nothing changes, nothing fires, however the observation got its
 * delivery id), and an observation the reducer refuses as `unregistered` is parked until the job
 * is registered (`parked`), rather than used up.
 */
export async function ingestInTx(
  tx: StoreTx,
  input: Observation,
  ctx: IngestContext,
  options: {
    /**
     * Changes the job the observation is about to write, in the same write: the reconciler's poll
     * bookkeeping (next check, attempts), so that one poll is one write of its job.
     */
    amend?: (next: Job) => Job;
    /**
     * The caller sends nothing after this ingest in its transaction: a store may then send the
     * COMMIT behind the job's write, before its answer (StoreTx.writeJobWithEvent's `last`).
     */
    endsTransaction?: boolean;
    /**
     * Where this ingest does not end the transaction: it may still be the store's one statement
     * (StoreTx.ingestAtOnce, not `last`), which saves the read's round trip. The caller's work
     * must be one that may run again from the start, as every transaction does that offers it.
     */
    atOnceWithin?: boolean;
    /** The caller reads only the outcome's `effects` (a run's mirror job): the job may be left out. */
    withoutJob?: boolean;
  } = {},
): Promise<IngestOutcome> {
  const { amend, endsTransaction = false, atOnceWithin = false, withoutJob = false } = options;
  // Every source passes here: a time out of range or too far ahead orders nothing it should not
  // (dropped, or cut to now, and the event says why) but never costs the state, and an
  // unstorable result or error is cut (and marked) rather than costing the state.
  const { obs, timeAdjusted } = withOrderingTime(boundObservation(input), ctx);
  if (
    (endsTransaction || atOnceWithin) &&
    amend === undefined &&
    tx.ingestAtOnce !== undefined &&
    isCanonicalState(obs.state)
  ) {
    const mayFire = effectsForAnyKind(ctx.effects, obs.provider, obs.state);
    // A transactional effect runs in Node, inside the transaction: the ordinary path.
    if (mayFire.every((definition) => definition.transactional === undefined))
      return ingestAtOnce(tx, tx.ingestAtOnce.bind(tx), obs, ctx, timeAdjusted, mayFire, {
        last: endsTransaction,
        withoutJob,
      });
  }
  const { duplicate, job: current } = await loadForIngest(tx, obs, ctx.now);
  if (duplicate) {
    const event = eventOf(obs, ctx.now, false, "duplicate-delivery", timeAdjusted);
    // Read again: the job as it is once the first delivery's transaction has committed.
    let job: Job | null;
    if (tx.appendEventAndGetJob !== undefined)
      job = await tx.appendEventAndGetJob(event, obs, endsTransaction);
    else {
      await tx.appendEvent(event);
      job = await tx.getJob(obs);
    }
    return { applied: false, reason: "duplicate-delivery", job, settled: false, effects: [] };
  }
  const result = reduce(current, obs, { now: ctx.now, unknownJobs: ctx.unknownJobs });
  // No job: a tombstone (the job settled and was pruned) answers instead. Read in a statement of
  // its own, never one taken with the job's: a prune that deleted the job while this transaction
  // waited for the row wrote the tombstone in the same commit, and only a statement started after
  // that commit sees it. The job's insert reads it where the store offers that (one round trip).
  const insertReadsTombstone = current === null && result.next !== null && tx.writeJobWithEvent !== undefined;
  if (current === null && !insertReadsTombstone) {
    const tombstone = await tx.getTombstone(obs);
    if (tombstone !== null) return answerPruned(tx, obs, ctx, tombstone, timeAdjusted);
  }
  if (!result.applied && result.reason === "unregistered") {
    // Durably kept (and its delivery id recorded): the sender's 2xx is honest, its retry a duplicate.
    await tx.parkObservation(obs, ctx.now);
    await appendEvent(tx, obs, ctx.now, false, "parked", timeAdjusted);
    return ignored("parked");
  }
  let job = current;
  const reason = result.applied ? null : result.reason;
  const event = eventOf(obs, ctx.now, result.applied, reason, timeAdjusted);
  const settled = result.applied && result.settled;
  let taken: ParkedObservation[] | undefined;
  let firing: readonly EffectDefinition[] = [];
  if (result.next !== null) {
    job = current === null ? withFirstCheck(result.next, ctx) : result.next;
    if (amend !== undefined) job = amend(job);
    if (settled) firing = effectsFor(ctx.effects, job, job.state);
    // With no effect to fire, the write ends a transaction that ends with this ingest, unless the
    // store answers a tombstone or parked observations: a store may send its COMMIT behind it.
    const written = await writeJob(tx, current, job, event, endsTransaction && firing.length === 0);
    if (written.pruned !== undefined) return answerPruned(tx, obs, ctx, written.pruned, timeAdjusted);
    taken = written.parked;
  } else {
    await tx.appendEvent(event);
    if (settled && job !== null) firing = effectsFor(ctx.effects, job, job.state);
  }
  // A job inserted here takes its parked observations before its effects fire (they are applied
  // after them): with none, nothing after the effects changes the job in this transaction.
  if (current === null && job !== null && taken === undefined && firing.length > 0)
    taken = await tx.takeParked(job);
  // An updated job has nothing parked to apply after its effects: the last enqueue may end the
  // transaction (an inserted one's parked observations come after them).
  const lastEnqueue = endsTransaction && current !== null;
  // The job as this transaction commits it, for the effects it hands over (see fireDefinitions).
  const final = endsTransaction && (current !== null || taken?.length === 0);
  const effects =
    job !== null ? await fireDefinitions(tx, job, job.state, firing, ctx, lastEnqueue, final) : [];
  if (current === null && job !== null) {
    // A job created here (a discovery sweep's adoption, an `adopt` webhook after the policy was
    // `registered-only`) may have completions parked for it: they wait for no registration that
    // may never come. Applied in this transaction, as registration applies them.
    const parked = await applyAllParked(tx, job, ctx, taken);
    job = parked.job;
    effects.push(...parked.effects);
  }
  return { applied: result.applied, reason, job, settled, effects };
}

/**
 * The whole ingest in one statement of the store's (StoreTx.ingestAtOnce), for an observation
 * that may fire no transactional effect: what Node decides without the job (the adopted job's
 * first check, the event's detail, the outbox rows a settling may enqueue) goes with it; the
 * reducer's rule, and the kinds filter of `mayFire`, run in the store. An outcome that needs more
 * than that statement fails the transaction, and the caller runs this again the ordinary way.
 */
async function ingestAtOnce(
  tx: StoreTx,
  atOnce: NonNullable<StoreTx["ingestAtOnce"]>,
  obs: Observation,
  ctx: IngestContext,
  timeAdjusted: { timeAdjusted: TimeAdjustment } | undefined,
  mayFire: readonly EffectDefinition[],
  { last, withoutJob }: { last: boolean; withoutJob: boolean },
): Promise<IngestOutcome> {
  const adopted = reduce(null, obs, { now: ctx.now, unknownJobs: "adopt" }).next;
  // Claimed on enqueue, as fireDefinitions does, while this process's dispatcher has room and the
  // schema's statement can write a row claimed (StoreTx.ingestAtOnceClaims): it writes each row it
  // enqueues `delivering`, leased, and the commit hands it over.
  const handoff = tx.ingestAtOnceClaims === true ? ctx.handoff : undefined;
  const planned = mayFire.map((definition) => {
    const row = newEffectRow(obs, definition.name, obs.state, ctx.newId(), ctx.now, ctx.traceParent);
    return { row: claimedWhileRoom(row, handoff, ctx.now), kinds: definition.kinds ?? null };
  });
  const { applied, reason, job, effects } = await atOnce(
    obs,
    {
      now: ctx.now,
      adopt: ctx.unknownJobs === "adopt",
      nextCheckAt: adopted === null ? null : withFirstCheck(adopted, ctx).nextCheckAt,
      detail: eventOf(obs, ctx.now, false, null, timeAdjusted).detail,
      effects: planned,
      ...(withoutJob ? { withoutJob } : {}),
    },
    last,
  );
  if (ctx.handoff !== undefined && effects.length > 0) {
    // The job as the statement wrote it, which is the transaction's when nothing follows it.
    const carried = last && job !== null ? job : undefined;
    for (const { row } of planned) {
      if (!effects.includes(row.name)) continue;
      if (handoff !== undefined && row.leaseUntil !== null) tx.afterCommit(() => handoff.take(row, carried));
      else ctx.handoff.enqueuedPending();
    }
  }
  return { applied, reason, job, settled: applied && isTerminal(obs.state), effects };
}

/**
 * The observation with the `updateTime` the reducer may order by (core/ordering-time.ts), and,
 * when that is not the time that came, the event detail that says what came and why.
 */
function withOrderingTime(
  obs: Observation,
  ctx: IngestContext,
): { obs: Observation; timeAdjusted: { timeAdjusted: TimeAdjustment } | undefined } {
  const ordering = orderingTimeOf(obs.updateTime, ctx.now, ctx.maxClockSkewMs ?? DEFAULT_MAX_CLOCK_SKEW_MS);
  if (ordering.adjusted === null) return { obs, timeAdjusted: undefined };
  const { updateTime: _given, ...rest } = obs;
  const adjusted = ordering.updateTime === undefined ? rest : { ...rest, updateTime: ordering.updateTime };
  return { obs: adjusted, timeAdjusted: { timeAdjusted: ordering.adjusted } };
}

/** A job that settled and was pruned: its tombstone answers, in an event, and nothing else. */
async function answerPruned(
  tx: StoreTx,
  obs: Observation,
  ctx: IngestContext,
  tombstone: Tombstone,
  timeAdjusted: { timeAdjusted: TimeAdjustment } | undefined,
): Promise<IngestOutcome> {
  await appendEvent(tx, obs, ctx.now, false, "already-settled-pruned", {
    ...timeAdjusted,
    tombstone: { state: tombstone.state, settledAt: tombstone.settledAt },
  });
  return ignored("already-settled-pruned");
}

function ignored(reason: IgnoreReason): IngestOutcome {
  return { applied: false, reason, job: null, settled: false, effects: [] };
}

export interface RegisterOutcome {
  created: boolean;
  job: Job;
  /** Names of the effects this registration enqueued or ran (late kind, parked completions). */
  effects: string[];
  /** How many parked observations were applied through the reducer. */
  parked: number;
}

/**
 * Registration, in one transaction: the upsert (`register`), then what it makes due —
 * the effects a settled (or stuck) job matches now that its kind or metadata is known and did
 * not match before, and the job's parked observations, oldest first, through the reducer.
 * A job whose tombstone is stored cannot be registered again: it would open, be polled, settle
 * and fire its effects a second time.
 */
export async function registerInTx(
  tx: StoreTx,
  reg: Registration,
  ctx: IngestContext,
  /** Who registers: the API and library (`api`), or an intent's attach (`intent`). */
  source: "api" | "intent" = "api",
  options: {
    /**
     * The caller sends nothing after this registration in its transaction: a store may send the
     * COMMIT behind a new job's write, before its answer (StoreTx.writeJobWithEvent's `last`).
     */
    endsTransaction?: boolean;
    /**
     * The caller's own writes, sent beside the job's write (each `WriteEnd` "beside" it): called
     * once the job has been read, just before its write goes out, so that they share its round
     * trip (and its COMMIT, with `endsTransaction`).
     */
    beside?: () => Promise<unknown>;
  } = {},
): Promise<RegisterOutcome> {
  // The read may go out with the transaction's BEGIN where the store offers it: loadForIngest
  // without a delivery id reads (and locks) the job as getJob does, and writes nothing.
  const current =
    tx.loadForIngest !== undefined
      ? (await tx.loadForIngest(reg, undefined, ctx.now)).job
      : await tx.getJob(reg);
  refuseUnpollable(reg, current, ctx);
  const result = register(current, reg, ctx.now);
  const event: Omit<JobEvent, "seqNo"> = {
    provider: reg.provider,
    id: reg.id,
    source,
    rawState: null,
    state: "pending",
    applied: result.created,
    reason: result.created ? null : "already-registered",
    deliveryId: null,
    dedupeKey: null,
    at: ctx.now,
    detail: { registration: true },
  };
  // A new job's insert reads the tombstone and takes its parked observations in the same
  // statement where the store offers that (StoreTx.writeJobWithEvent), as ingest's insert does;
  // else the tombstone is read in a statement of its own first (see ingestInTx).
  const insertReadsTombstone = current === null && tx.writeJobWithEvent !== undefined;
  if (current === null && !insertReadsTombstone) {
    const tombstone = await tx.getTombstone(reg);
    if (tombstone !== null) throw prunedRegistration(reg, tombstone);
  }
  let job = current;
  let taken: ParkedObservation[] | undefined;
  // Nothing follows a new job's write unless it comes back pruned or with parked observations,
  // and then the store has the transaction run again without the COMMIT ahead.
  const last = options.endsTransaction === true && current === null;
  if (result.next !== null) {
    const next = current === null ? withFirstCheck(result.next, ctx) : result.next;
    job = next;
    const [, written] = await inSendingOrder([options.beside?.(), writeJob(tx, current, next, event, last)]);
    if (written.pruned !== undefined) throw prunedRegistration(reg, written.pruned);
    taken = written.parked;
  } else await inSendingOrder([options.beside?.(), tx.appendEvent(event)]);
  if (job === null) throw new Error("unreachable: registration left no job");
  const effects = current === null ? [] : await fireNewlyMatching(tx, current, job, ctx);
  const parked = await applyAllParked(tx, job, ctx, taken);
  effects.push(...parked.effects);
  return { created: result.created, job: parked.job, effects, parked: parked.count };
}

function prunedRegistration(reg: Registration, tombstone: Tombstone): FinalityError {
  return new FinalityError(
    "conflict",
    `job ${reg.provider}/${reg.id} settled (${tombstone.state}) and was pruned; its id cannot be registered again`,
    {
      details: {
        provider: reg.provider,
        id: reg.id,
        reason: "already-settled-pruned",
        tombstone: { state: tombstone.state, settledAt: new Date(tombstone.settledAt).toISOString() },
      },
    },
  );
}

/**
 * A job its provider's poller could not reach (an OpenAI id that is neither `resp_` nor `batch_`
 * and no kind to tell): refused, rather than accepted and then failing every poll unseen.
 */
function refuseUnpollable(reg: Registration, current: Job | null, ctx: IngestContext): void {
  // Settled already (adopted from a webhook, say): nothing will be polled, so nothing to refuse.
  if (current !== null && current.settledAt !== null) return;
  const problem = ctx.unpollable?.(reg.id, reg.kind ?? current?.kind ?? null) ?? null;
  if (problem === null) return;
  throw new FinalityError("invalid-request", `id: ${problem}`, {
    details: { field: "id", provider: reg.provider, id: reg.id },
  });
}

/**
 * Takes the job's parked observations and applies them oldest first, in the caller's transaction.
 * Every path that creates a job or registers it calls this: a completion parked for a job that
 * came to exist another way would otherwise wait in the inbox until it expired.
 */
async function applyAllParked(
  tx: StoreTx,
  job: Job,
  ctx: IngestContext,
  /** Taken already, with the job's insert (`StoreTx.writeJobWithEvent`). */
  taken?: ParkedObservation[],
): Promise<{ job: Job; effects: string[]; count: number }> {
  const parked = taken ?? (await tx.takeParked(job));
  const effects: string[] = [];
  let current = job;
  for (const observation of parked) {
    const applied = await applyParked(tx, current, observation, ctx);
    current = applied.job;
    effects.push(...applied.effects);
  }
  return { job: current, effects, count: parked.length };
}

/**
 * Effects are chosen when a job settles (or is flagged stuck), by its kind and provider then. A
 * job adopted from a webhook before its registration settles with no kind, so an effect limited
 * to `kinds` did not fire; once the kind is known, it does — only the definitions that match
 * now and did not before, so nothing that fired runs twice (the outbox row's uniqueness and the
 * stable key guard the rest).
 */
async function fireNewlyMatching(
  tx: StoreTx,
  before: Job,
  after: Job,
  ctx: IngestContext,
): Promise<string[]> {
  const trigger = after.settledAt !== null ? after.state : after.stuck ? "stuck" : null;
  if (trigger === null) return [];
  const matched = new Set(effectsFor(ctx.effects, before, trigger).map((d) => d.name));
  const now = effectsFor(ctx.effects, after, trigger).filter((d) => !matched.has(d.name));
  return fireDefinitions(tx, after, trigger, now, ctx);
}

/** One parked observation through the reducer, as if it arrived now (its delivery id is recorded). */
async function applyParked(
  tx: StoreTx,
  job: Job,
  parked: ParkedObservation,
  ctx: IngestContext,
): Promise<{ job: Job; effects: string[] }> {
  const obs = parked.observation;
  const result = reduce(job, obs, { now: ctx.now, unknownJobs: ctx.unknownJobs });
  const next = result.next ?? job;
  if (result.next !== null) await writeJob(tx, job, result.next);
  await appendEvent(tx, obs, ctx.now, result.applied, result.applied ? null : result.reason, {
    parkedAt: parked.parkedAt,
  });
  const effects = result.applied && result.settled ? await fireEffects(tx, next, next.state, ctx) : [];
  return { job: next, effects };
}

/** Enqueues the outbox rows and runs the transactional effects for a job that reached `trigger`. */
export async function fireEffects(
  tx: StoreTx,
  job: Job,
  trigger: string,
  ctx: IngestContext,
): Promise<string[]> {
  return fireDefinitions(tx, job, trigger, effectsFor(ctx.effects, job, trigger), ctx);
}

async function fireDefinitions(
  tx: StoreTx,
  job: Job,
  trigger: string,
  definitions: readonly EffectDefinition[],
  ctx: IngestContext,
  /** Nothing follows these effects in the transaction: the last enqueue may end it (StoreTx.enqueueEffect). */
  endsTransaction = false,
  /**
   * `job` is the job as this ingest leaves it (nothing after these effects writes it). An effect
   * handed over then carries it, and its first attempt reads no job: it delivers the job its
   * settling ingest wrote (a batch-mate in the same group commit may write it again; retries read
   * it). Not with a transactional effect among them: it may write to the job with the transaction.
   */
  final = false,
): Promise<string[]> {
  const fired: string[] = [];
  const { handoff } = ctx;
  const carried = final && definitions.every((d) => d.transactional === undefined) ? job : undefined;
  for (const [at, definition] of definitions.entries()) {
    if (definition.transactional) {
      await definition.transactional(job, tx);
      fired.push(definition.name);
      continue;
    }
    const row = newEffectRow(job, definition.name, trigger, ctx.newId(), ctx.now, ctx.traceParent);
    // Claimed in this transaction when this process's dispatcher has room for it: it is handed
    // over once the commit has returned, and the claim's own transaction is saved. Should the
    // process stop before it is delivered, its lease runs out and any dispatcher claims it.
    const effect = claimedWhileRoom(row, handoff, ctx.now);
    if (await tx.enqueueEffect(effect, endsTransaction && at === definitions.length - 1)) {
      fired.push(definition.name);
      if (effect.leaseUntil !== null) tx.afterCommit(() => handoff?.take(effect, carried));
      else handoff?.enqueuedPending();
    }
  }
  return fired;
}

/** `row` claimed on enqueue while this process's dispatcher has room for one more, else as it is. */
function claimedWhileRoom(row: Effect, handoff: EffectHandoff | undefined, now: number): Effect {
  const leaseMs = handoff?.leaseMsForNext() ?? null;
  return leaseMs === null ? row : claimedOnEnqueue(row, now + leaseMs);
}

/**
 * What ingest reads before the reducer runs: whether the delivery id is new (recorded now) and,
 * if it is, the job (locked for this transaction where the store locks rows). A store where each
 * statement is a round trip answers both at once (`StoreTx.loadForIngest`); the others one after
 * the other, through the same calls a test or a mutant may wrap.
 */
async function loadForIngest(tx: StoreTx, obs: Observation, now: number): Promise<IngestLoad> {
  if (tx.loadForIngest !== undefined) return tx.loadForIngest(obs, obs.deliveryId, now);
  const duplicate =
    obs.deliveryId !== undefined && !(await tx.recordDelivery(obs.provider, obs.deliveryId, now));
  return { duplicate, job: duplicate ? null : await tx.getJob(obs) };
}

/**
 * Inserts `next` or compare-and-sets it over `current` (version-conflict when another
 * transaction changed it first), and appends `event` with it when given: in one statement where
 * the store offers it (`StoreTx.writeJobWithEvent`), which also answers an inserted job's parked
 * observations, taken, or the tombstone that kept it from being inserted (then nothing is written).
 */
export async function writeJob(
  tx: StoreTx,
  current: Job | null,
  next: Job,
  event?: Omit<JobEvent, "seqNo">,
  /** Nothing follows in the transaction unless pruned or parked comes back (StoreTx.writeJobWithEvent). */
  last = false,
): Promise<JobWritten> {
  let outcome: JobWritten;
  if (event !== undefined && tx.writeJobWithEvent !== undefined) {
    outcome = await tx.writeJobWithEvent(current, next, event, last);
    if (outcome.pruned !== undefined) return outcome;
  } else {
    const written =
      current === null ? await tx.insertJob(next) : await tx.updateJob(next, current.version, current);
    // Appended after a failed write too: the version-conflict below rolls the transaction back.
    if (event !== undefined) await tx.appendEvent(event);
    outcome = { written };
  }
  if (!outcome.written) {
    throw new FinalityError("version-conflict", `job ${next.provider}/${next.id} changed concurrently`, {
      details: { provider: next.provider, id: next.id, expectedVersion: current?.version ?? 0 },
    });
  }
  return outcome;
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
  extra?: Record<string, unknown>,
) {
  return tx.appendEvent(eventOf(obs, at, applied, reason, extra));
}

/** The audit event of one observation: what came, whether it applied, and why not. */
function eventOf(
  obs: Observation,
  at: number,
  applied: boolean,
  reason: IgnoreReason | null,
  extra?: Record<string, unknown>,
): Omit<JobEvent, "seqNo"> {
  const truncated = truncatedFields(obs);
  const ordering =
    obs.seq !== undefined || obs.updateTime !== undefined || truncated.length > 0
      ? { seq: obs.seq, updateTime: obs.updateTime, ...(truncated.length > 0 ? { truncated } : {}) }
      : null;
  const detail = extra === undefined ? ordering : { ...ordering, ...extra };
  return {
    provider: obs.provider,
    id: obs.id,
    source: obs.source,
    rawState: obs.rawState ?? null,
    state: obs.state,
    applied,
    reason,
    deliveryId: obs.deliveryId ?? null,
    dedupeKey: null,
    at,
    detail,
  };
}
