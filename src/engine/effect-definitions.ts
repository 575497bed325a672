import type { Intent } from "../core/intent-model.js";
import type { Effect, Job, JobKey } from "../core/model.js";
import { sha256Hex } from "../core/sha256-hex.js";
import { TERMINAL_STATES, type TerminalState } from "../core/states.js";
import type { StoreTx } from "../store/store.js";
import type {
  AmqpDestination,
  CloudEventsOptions,
  NatsDestination,
  RedisDestination,
} from "./effect-destinations.js";

/** What a delivery hands to an in-process handler or POSTs to a URL. */
export interface EffectDelivery {
  type: "job.settled" | "job.stuck" | "intent.orphaned";
  effect: string;
  idempotencyKey: string;
  /** 1 on the first try, then 2, 3, ... on retries. */
  attempt: number;
  /**
   * The job. For `intent.orphaned` (an intent still without a remote id after its timeout, for
   * effects with `on: ["orphaned"]`) there is no job yet: this is the stand-in the outbox row
   * names (id = the intent key, state `pending`, the intent's kind and metadata), and `intent`
   * holds the intent.
   */
  job: Job;
  /** Only on `intent.orphaned`. */
  intent?: Intent;
}

/**
 * An effect to run when a job first reaches one of the `on` states. Exactly one target:
 * - `handler`: an in-process function, delivered from the outbox (at least once, same key);
 * - `url`: a signed Standard Webhooks POST, delivered from the outbox (`webhook-id` = key);
 * - `nats`, `amqp`, `redis`: a message to a broker, from the outbox (the key as its message id);
 * - `transactional`: runs inside the ingest transaction and commits with it (exactly once);
 *   it throws to refuse the state change, which the sender then retries.
 */
export interface EffectDefinition {
  name: string;
  /** Default: every terminal state. `stuck` and `orphaned` (an intent's alert) only when listed. */
  on?: readonly (TerminalState | "stuck" | "orphaned")[];
  providers?: readonly string[];
  kinds?: readonly string[];
  /**
   * `signal` is aborted when the attempt must stop (its timeout, or its claim lost): a handler that
   * honours it never runs on after another dispatcher has taken the delivery over.
   */
  handler?: (delivery: EffectDelivery, signal: AbortSignal) => Promise<void>;
  url?: string;
  secret?: string;
  nats?: NatsDestination;
  amqp?: AmqpDestination;
  redis?: RedisDestination;
  /** The message: Finality's own JSON (default) or a CloudEvents 1.0 event. */
  format?: "finality" | "cloudevents";
  cloudevents?: CloudEventsOptions;
  /**
   * The largest message the destination takes, in bytes; the lower of this and the broker's own
   * limit (NATS `max_payload`, Redis `proto-max-bulk-len`) holds. A job too large for it is sent
   * with its result, error or metadata cut and marked (engine/message-fit.ts). Default: none for
   * `url`, 16 MiB for `amqp` (RabbitMQ's `max_message_size`, which it does not announce).
   */
  maxMessageBytes?: number;
  transactional?: (job: Job, tx: StoreTx) => Promise<void>;
}

/** Definitions that fire for a job that just reached `trigger` (a terminal state, or `stuck`). */
export function effectsFor(
  definitions: readonly EffectDefinition[],
  job: Job,
  trigger: string,
): EffectDefinition[] {
  return definitions.filter(
    (d) =>
      (d.on ?? TERMINAL_STATES).includes(trigger as TerminalState) &&
      (d.providers === undefined || d.providers.includes(job.provider)) &&
      (d.kinds === undefined || (job.kind !== null && d.kinds.includes(job.kind))),
  );
}

/**
 * The definitions that may fire when a job of `provider` reaches `trigger`, whatever its kind:
 * `effectsFor` of every job that could, known before the job is read.
 */
export function effectsForAnyKind(
  definitions: readonly EffectDefinition[],
  provider: string,
  trigger: string,
): EffectDefinition[] {
  return definitions.filter(
    (d) =>
      (d.on ?? TERMINAL_STATES).includes(trigger as TerminalState) &&
      (d.providers === undefined || d.providers.includes(provider)),
  );
}

/**
 * The idempotency key of a job's effect for a trigger: derived from what names it (provider, job
 * id, effect name, trigger), not drawn at random, so that the effect carries the same key however
 * often it is enqueued again — a retry or replay of the row, and also a new row after a restore
 * from an older backup or after retention forgot the job and a late webhook brought it back.
 * 128 bits of SHA-256 over fields that cannot contain the NUL separator.
 */
export function effectIdempotencyKey(provider: string, jobId: string, name: string, trigger: string): string {
  // The first 16 bytes of the digest.
  return `fin_${sha256Hex(`${provider}\u0000${jobId}\u0000${name}\u0000${trigger}`).slice(0, 32)}`;
}

export function newEffectRow(
  job: JobKey,
  name: string,
  trigger: string,
  id: string,
  now: number,
  traceParent: string | null = null,
): Effect {
  return {
    id,
    provider: job.provider,
    jobId: job.id,
    name,
    idempotencyKey: effectIdempotencyKey(job.provider, job.id, name, trigger),
    trigger,
    status: "pending",
    attempts: 0,
    nextAttemptAt: now,
    leaseUntil: null,
    lastError: null,
    createdAt: now,
    deliveredAt: null,
    traceParent,
  };
}

/**
 * An outbox row as the dispatcher's claim leaves it (the first attempt, leased until
 * `leaseUntil`): what a transaction enqueues for the dispatcher it hands the effect to.
 */
export function claimedOnEnqueue(row: Effect, leaseUntil: number): Effect {
  return { ...row, status: "delivering", attempts: 1, leaseUntil };
}
