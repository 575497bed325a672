import { FinalityError } from "../core/errors.js";
import type { AttachedBy, Intent } from "../core/intent-model.js";
import { type Job, UNTOUCHED_JOB } from "../core/model.js";
import type { IntentInput } from "../core/validation.js";
import type { StoreTx } from "../store/store.js";
import { fireEffects, type IngestContext, registerInTx } from "./ingest.js";

/** The default time an intent may stay without a remote id before it is flagged orphaned (15 min). */
export const DEFAULT_INTENT_TIMEOUT_SECONDS = 900;

export interface RecordIntentOutcome {
  /** False when the same intent was recorded before (the 200 of a repeated POST). */
  created: boolean;
  intent: Intent;
}

/**
 * Records an intent, in one transaction. The same key with the same provider, kind and metadata
 * is the same intent (a retried call); anything else under that key is refused (409), so that a
 * key never names two submissions.
 */
export async function recordIntentInTx(
  tx: StoreTx,
  input: IntentInput,
  ctx: { now: number; timeoutMs: number; newId: () => string },
): Promise<RecordIntentOutcome> {
  const existing = await tx.getIntent(input.key);
  if (existing !== null) return { created: false, intent: sameIntentOrConflict(existing, input) };
  const intent: Intent = {
    key: input.key,
    provider: input.provider,
    kind: input.kind ?? null,
    metadata: input.metadata ?? null,
    idempotencyKey: `fin_intent_${ctx.newId()}`,
    createdAt: ctx.now,
    deadlineAt: ctx.now + ctx.timeoutMs,
    jobId: null,
    attachedAt: null,
    attachedBy: null,
    orphanedAt: null,
  };
  if (!(await tx.insertIntent(intent))) {
    throw new FinalityError("version-conflict", `intent ${input.key} was recorded meanwhile`);
  }
  return { created: true, intent };
}

function sameIntentOrConflict(existing: Intent, input: IntentInput): Intent {
  const same =
    existing.provider === input.provider &&
    existing.kind === (input.kind ?? null) &&
    canonicalJson(existing.metadata) === canonicalJson(input.metadata ?? null);
  if (same) return existing;
  throw new FinalityError("conflict", `intent ${existing.key} was recorded with a different body`, {
    details: { key: existing.key, provider: existing.provider, reason: "intent-key-reused" },
  });
}

export interface AttachOutcome {
  intent: Intent;
  job: Job;
  /** False when this id was attached already (an idempotent repeat). */
  attached: boolean;
  /** Effects the attach made due (a settled adopted job whose kind is now known). */
  effects: string[];
}

/**
 * Attaches the remote id to an intent, in one transaction, by registering the job with the
 * intent's kind and metadata (`registerInTx`): a job a webhook or a sweep adopted first keeps
 * its events and state and gains the kind and metadata, so attaching merges the two into one
 * job. Attaching the same id again changes nothing; another id is refused (409).
 */
export async function attachIntentInTx(
  tx: StoreTx,
  key: string,
  id: string,
  by: AttachedBy,
  ctx: IngestContext,
): Promise<AttachOutcome> {
  const intent = await tx.getIntent(key);
  if (intent === null) throw new FinalityError("not-found", `no intent ${key}`, { details: { key } });
  if (intent.jobId !== null) {
    if (intent.jobId !== id) throw attachedElsewhere(intent, id);
    const job = await tx.getJob({ provider: intent.provider, id });
    if (job !== null) return { intent, job, attached: false, effects: [] };
  }
  const other = await tx.intentForJob(intent.provider, id);
  if (other !== null && other.key !== key) {
    throw new FinalityError("conflict", `job ${intent.provider}/${id} is attached to intent ${other.key}`, {
      details: { key, id, attachedTo: other.key },
    });
  }
  const registration = {
    provider: intent.provider,
    id,
    kind: intent.kind ?? undefined,
    metadata: intent.metadata,
  };
  const registered = await registerInTx(tx, registration, ctx, "intent");
  const next: Intent = { ...intent, jobId: id, attachedAt: ctx.now, attachedBy: by };
  if (!(await tx.updateIntent(next, intent))) {
    throw new FinalityError("version-conflict", `intent ${key} changed concurrently`);
  }
  return { intent: next, job: registered.job, attached: true, effects: registered.effects };
}

/**
 * Attaches `id` to a copy of `intent`, whose record lives in another store: a sharded Worker keeps
 * every intent on its runs home and each job on the job's shard. The copy is inserted (open) when
 * this store has none and attached at once, in the caller's transaction, so the job is registered
 * with the intent's kind and metadata where it lives, and this store refuses a job attached to
 * another intent as one ledger does. A copy is never open once committed: no orphan scan flags it.
 */
export async function attachIntentCopyInTx(
  tx: StoreTx,
  intent: Intent,
  id: string,
  by: AttachedBy,
  ctx: IngestContext,
): Promise<AttachOutcome> {
  const here = await tx.getIntent(intent.key);
  if (here === null) {
    const open: Intent = { ...intent, jobId: null, attachedAt: null, attachedBy: null };
    if (!(await tx.insertIntent(open)))
      throw new FinalityError("version-conflict", `intent ${intent.key} was copied meanwhile`);
  } else if (here.provider !== intent.provider) {
    throw new FinalityError("conflict", `intent ${intent.key} names another provider here`, {
      details: { key: intent.key, provider: here.provider, reason: "intent-key-reused" },
    });
  }
  return attachIntentInTx(tx, intent.key, id, by, ctx);
}

/**
 * Records on an intent's own store that its job `id` was attached where the job lives
 * (`attachIntentCopyInTx`); registers nothing here. The same id again changes nothing.
 */
export async function markIntentAttachedInTx(
  tx: StoreTx,
  key: string,
  id: string,
  by: AttachedBy,
  at: number,
): Promise<Intent> {
  const intent = await tx.getIntent(key);
  if (intent === null) throw new FinalityError("not-found", `no intent ${key}`, { details: { key } });
  if (intent.jobId === id) return intent;
  refuseOtherJob(intent, id);
  const next: Intent = { ...intent, jobId: id, attachedAt: at, attachedBy: by };
  if (!(await tx.updateIntent(next, intent))) {
    throw new FinalityError("version-conflict", `intent ${key} changed concurrently`);
  }
  return next;
}

/** Throws the 409 of attaching `id` to an intent attached to another job already. */
export function refuseOtherJob(intent: Intent, id: string): void {
  if (intent.jobId !== null && intent.jobId !== id) throw attachedElsewhere(intent, id);
}

function attachedElsewhere(intent: Intent, id: string): FinalityError {
  return new FinalityError("conflict", `intent ${intent.key} is attached to ${intent.jobId}, not ${id}`, {
    details: { key: intent.key, jobId: intent.jobId, id },
  });
}

/**
 * Flags up to `limit` open intents past their deadline as orphaned, each once: the CAS on the
 * flag makes a second scan (another replica, a restart) change nothing, and the outbox row is
 * unique per intent, effect and trigger. Effects whose `on` includes `orphaned` get one row,
 * keyed by the intent (provider, intent key, trigger `orphaned`).
 */
export async function flagOrphanedInTx(
  tx: StoreTx,
  ctx: IngestContext,
  limit: number,
): Promise<{ flagged: Intent[]; effects: string[] }> {
  const flagged: Intent[] = [];
  const effects: string[] = [];
  for (const intent of await tx.overdueIntents(ctx.now, limit)) {
    const next: Intent = { ...intent, orphanedAt: ctx.now };
    if (!(await tx.updateIntent(next, intent))) continue;
    flagged.push(next);
    effects.push(...(await fireEffects(tx, intentAlertSubject(next), "orphaned", ctx)));
  }
  return { flagged, effects };
}

/**
 * An outbox row belongs to a (provider, id) pair: an orphaned intent's alert uses the intent's
 * key as the id (the trigger `orphaned` keeps it apart from any job's rows), and its kind for
 * the effects' `kinds` filter. The dispatcher loads the intent, not a job, for this trigger.
 */
export function intentAlertSubject(intent: Intent): Job {
  return {
    provider: intent.provider,
    id: intent.key,
    kind: intent.kind,
    state: "pending",
    version: 0,
    maxSeq: null,
    maxUpdateTime: null,
    submittedAt: intent.createdAt,
    updatedAt: intent.orphanedAt ?? intent.createdAt,
    settledAt: null,
    settledBy: null,
    ...UNTOUCHED_JOB,
    metadata: intent.metadata,
    result: null,
    error: null,
  };
}

/** JSON with object keys sorted: two metadata values that mean the same compare equal. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)),
        )
      : v,
  );
}
