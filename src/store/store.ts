import type { Clock } from "../core/clock.js";
import type {
  Effect,
  EffectStatus,
  IgnoreReason,
  Job,
  JobEvent,
  JobKey,
  Observation,
} from "../core/model.js";
import type { HousekeepingStore } from "./housekeeping-store.js";
import type { IntentReads, IntentStoreTx } from "./intent-store.js";
import type { LatencyReads } from "./latency-reads.js";
import type { LifecycleReads, LifecycleStoreTx, ParkedObservation, Tombstone } from "./lifecycle-store.js";
import type { OverviewReads } from "./overview-reads.js";
import type { Page } from "./page.js";
import type { RunStore, RunStoreTx } from "./run-store.js";
import type { SettlementReads } from "./settlement-feed.js";

// Page lives in its own file so the read ports that return pages need not import this one (no cycle).
export type { Page } from "./page.js";

/**
 * The store port. Callers depend on this file only; adapters (SQLite, PostgreSQL) implement it.
 * Asynchronous even where the driver is not, because PostgreSQL and serverless stores are.
 */
export interface Store
  extends RunStore,
    HousekeepingStore,
    OverviewReads,
    LatencyReads,
    LifecycleReads,
    SettlementReads,
    IntentReads {
  readonly dialect: "sqlite" | "postgres";
  /**
   * The clock a store shared by several machines counts time by (PostgreSQL: the database's), the
   * ledger's default so that replicas agree on lease and claim times; absent where one machine's
   * clock is the only one (SQLite, a Durable Object).
   */
  readonly clock?: Clock;
  /**
   * Runs `work` in one write transaction and commits before resolving. `work` may be run again
   * after a rollback — when it throws a `version-conflict` FinalityError, or when another
   * caller's work in the same group commit failed — so it must not have effects outside the
   * transaction; only its last run commits. Work that throws any other error is not re-run.
   * Adapters may commit several callers' work together (group commit); each caller's work is
   * still atomic on its own.
   */
  transaction<T>(work: (tx: StoreTx) => Promise<T>, options?: TransactionOptions): Promise<T>;

  getJob(key: JobKey): Promise<Job | null>;
  listJobs(query: JobQuery): Promise<Page<Job>>;
  jobEvents(key: JobKey, page?: { limit?: number; after?: number }): Promise<JobEvent[]>;
  getEffect(id: string): Promise<Effect | null>;
  listEffects(query: EffectQuery): Promise<Page<Effect>>;

  /** Claims up to `limit` due effects: sets their lease so no other dispatcher takes them. */
  claimEffects(now: number, limit: number, leaseMs: number): Promise<Effect[]>;
  /** Records the outcome of a claimed delivery; a no-op (false) if the claim was lost. */
  finishEffect(outcome: EffectOutcome): Promise<boolean>;
  /**
   * Moves a claimed delivery's lease to `leaseUntil` while it is still in flight (a heartbeat), if
   * the caller still holds the claim (`lease_until` is `claimedUntil`); false, and nothing changes,
   * if another dispatcher took it over or it was finished.
   */
  extendEffectLease(id: string, claimedUntil: number, leaseUntil: number): Promise<boolean>;

  /** Claims up to `limit` open jobs due for a reconcile poll, pushing their check time to `leaseUntil`. */
  claimDueJobs(now: number, limit: number, leaseUntil: number, providers?: readonly string[]): Promise<Job[]>;

  /** True when this delivery id of this provider is recorded (a redelivery would be a duplicate). */
  hasDelivery(provider: string, deliveryId: string): Promise<boolean>;

  /** True when the database answers and every migration is applied. */
  ready(): Promise<boolean>;
  /** Counts for /metrics; `dueJobs` are the open jobs whose next check is at or before `now`. */
  stats(now: number): Promise<StoreStats>;
  close(): Promise<void>;
}

export interface TransactionOptions {
  /**
   * The key of the rows `work` locks (its job's provider and id, then its delivery id): an
   * adapter that commits several callers together runs them in this order, so that two replicas
   * batching the same jobs take their locks in one order and cannot deadlock. Work without one
   * runs in a transaction of its own on such an adapter.
   */
  lockOrder?: string;
}

/**
 * The lock order of a transaction on one job (see TransactionOptions): the job key, then the
 * delivery id, so that one job's callers stay together and its deliveries sort among themselves.
 */
export function jobLockOrder(key: JobKey, deliveryId?: string): string {
  return `${key.provider}\u0000${key.id}\u0000${deliveryId ?? ""}`;
}

/**
 * The rows a lock order names, without the delivery id after them: the job (`provider`, NUL,
 * `id`), or the whole key when it names no job. Callers of one group with the same rows must run
 * one after another, each reading what the one before wrote.
 */
export function lockedRowsOf(lockOrder: string): string {
  const first = lockOrder.indexOf("\u0000");
  const second = first === -1 ? -1 : lockOrder.indexOf("\u0000", first + 1);
  return second === -1 ? lockOrder : lockOrder.slice(0, second);
}

/** What a transaction may do. Every write goes through here. */
export interface StoreTx extends RunStoreTx, LifecycleStoreTx, IntentStoreTx {
  /**
   * Runs `fn` once this transaction has committed — on a group commit, once the group's COMMIT
   * has returned — and never if it rolls back or its work throws. Callbacks run in the order
   * they were registered, before `Store.transaction` resolves; a run of `work` rolled back and
   * re-run (see `Store.transaction`) leaves none of its callbacks behind. The one way to act on
   * a write outside the database (wake a dispatcher, a waiting claim): inside the work it could
   * announce a write that is then rolled back. If a callback throws, the others still run and
   * `Store.transaction` rejects with the first error, although the transaction is committed.
   */
  afterCommit(fn: () => void): void;
  /** Records a sender's delivery id; false if it was seen before (a redelivery). */
  recordDelivery(provider: string, deliveryId: string, now: number): Promise<boolean>;
  getJob(key: JobKey): Promise<Job | null>;
  /** Inserts a new job; false if one with that key exists already (a race: re-run). */
  insertJob(job: Job): Promise<boolean>;
  /**
   * Writes `job` if the stored version is still `expectedVersion`; false otherwise (CAS).
   * `previous`, the job as read in this transaction, lets a store write only the columns that
   * differ from it (SQLite); the result is the same.
   */
  updateJob(job: Job, expectedVersion: number, previous?: Job): Promise<boolean>;
  /** Appends to the audit trail; false if its dedupe key was used before. */
  appendEvent(event: Omit<JobEvent, "seqNo">): Promise<boolean>;
  /**
   * Optional, for a store where each statement is a round trip (PostgreSQL): ingest's first two
   * calls in one — `recordDelivery` (when `deliveryId` is given) and, when the delivery is new,
   * `getJob` (locked as `getJob` locks) — answering as they would. Ingest makes the calls itself
   * where this is absent.
   */
  loadForIngest?(key: JobKey, deliveryId: string | undefined, now: number): Promise<IngestLoad>;
  /**
   * Optional, as above: `insertJob(next)` when `current` is null, else
   * `updateJob(next, current.version, current)`, and `appendEvent(event)`, in one statement.
   * `written` false: the job write was refused (the caller then throws version-conflict, so the
   * event goes with the rolled-back work). An insert first reads the job's tombstone, as
   * `getTombstone` would: when there is one, nothing is written and it is answered (`pruned`).
   * A job inserted here also has its parked observations taken, as `takeParked` would (`parked`).
   * `last`: the caller sends nothing after this in its transaction when the job is written and
   * nothing is pruned or parked. A store may then send its COMMIT before the answer, having the
   * statement fail (and the transaction with it) on any other outcome; the caller is run again.
   */
  writeJobWithEvent?(
    current: Job | null,
    next: Job,
    event: Omit<JobEvent, "seqNo">,
    last?: boolean,
  ): Promise<JobWritten>;
  /**
   * Optional, for a store where each statement is a round trip: `appendEvent(event)` and then
   * `getJob(key)`, in one statement, answering the job (a redelivery's answer). `last` as in
   * `writeJobWithEvent`: nothing follows it in the transaction.
   */
  appendEventAndGetJob?(event: Omit<JobEvent, "seqNo">, key: JobKey, last?: boolean): Promise<Job | null>;
  /**
   * Optional, for a store where each statement is a round trip and the COMMIT may go out behind
   * a transaction's last statement (PostgreSQL): a webhook's whole ingest, the one thing its
   * transaction does, in one statement — the delivery recorded, the job loaded and locked, the
   * reducer's rule applied, the job inserted or written, the event appended with `plan.detail`
   * (a redelivery: its event, and the job as it is), and on the job's first terminal state the
   * outbox rows of `plan.effects` whose kinds take the job's kind. The store then sends BEGIN, it
   * and COMMIT in one write. Only for an observation in a canonical state that may fire no
   * transactional effect.
   * An unknown job under `registered-only` has the observation parked, as `parkObservation` parks
   * it. Any outcome that asks for more (a tombstone, parked observations for a job it inserts, a
   * registration or insert that committed meanwhile) fails the statement and the transaction
   * with NOT_LAST: the caller runs again the ordinary way, where this is absent.
   * `last` false: the caller's work goes on after it in the same transaction (a worker's end that
   * claims the next run); the statement then only saves the read's round trip, the COMMIT waits.
   */
  ingestAtOnce?(obs: Observation, plan: IngestPlan, last?: boolean): Promise<IngestedAtOnce>;
  /**
   * `ingestAtOnce` writes a planned row that has a `leaseUntil` claimed (`delivering`, attempt 1,
   * leased), as `enqueueEffect` does. Absent: it writes every row pending, whatever the plan says
   * (a PostgreSQL schema before migration 0019), so none may be handed over.
   */
  ingestAtOnceClaims?: boolean;
  /**
   * Adds an outbox row; false if this job already has a row for that effect name and trigger.
   * `last`: the caller sends nothing after this in its transaction, and reads its answer only
   * after (StoreTx.writeJobWithEvent's `last`): a store may send its COMMIT right behind it.
   */
  enqueueEffect(effect: Effect, last?: boolean): Promise<boolean>;
  getEffect(id: string): Promise<Effect | null>;
  updateEffect(effect: Effect): Promise<void>;
  /** Plain SQL for transactional effects that write to the same database (exactly once). */
  execute(sql: string, params?: readonly unknown[]): Promise<Record<string, unknown>[]>;
}

/** What `StoreTx.writeJobWithEvent` did. */
export interface JobWritten {
  written: boolean;
  /** The inserted job's parked observations, oldest first, taken (absent after an update). */
  parked?: ParkedObservation[];
  /** The tombstone that kept an insert from being written (nothing was). */
  pruned?: Tombstone;
}

/** What `StoreTx.ingestAtOnce` needs beside the observation: what ingest would decide in Node. */
export interface IngestPlan {
  now: number;
  /** `unknownJobs` is `adopt`: an unknown job is created, not parked. */
  adopt: boolean;
  /** The adopted job's first check (`IngestContext.firstCheckAt`), when it does not settle. */
  nextCheckAt: number | null;
  /** The event's detail (its ordering fields, cut fields, time adjustment). */
  detail: unknown;
  /**
   * The outbox rows the observation may enqueue if it settles the job, in the definitions' order:
   * each enqueued when its `kinds` (null: any) take the job's kind after the write.
   */
  effects: { row: Effect; kinds: readonly string[] | null }[];
  /** The caller reads no job in the answer: the store may answer `job: null` and send less. */
  withoutJob?: boolean;
}

/** What `StoreTx.ingestAtOnce` did: the reducer's answer and the job after it. */
export interface IngestedAtOnce {
  applied: boolean;
  reason: IgnoreReason | null;
  /** The job after the write; null when there is none, or when the plan said `withoutJob`. */
  job: Job | null;
  /** Names of the effects enqueued (new outbox rows). */
  effects: string[];
}

/** What ingest reads before the reducer runs (`StoreTx.loadForIngest`). */
export interface IngestLoad {
  /** The delivery id was seen before (a redelivery); nothing else is owed to it. */
  duplicate: boolean;
  /** The job, locked; null when there is none, and for a duplicate (ingest reads it again then). */
  job: Job | null;
}

/**
 * A StoreTx without `afterCommit`: what an adapter's own transaction offers. The adapter's
 * `Store.transaction` adds `afterCommit` for each caller (see withAfterCommit).
 */
export type AdapterTx = Omit<StoreTx, "afterCommit">;

export interface JobQuery {
  state?: string | undefined;
  provider?: string | undefined;
  kind?: string | undefined;
  stuck?: boolean | undefined;
  /** Open (non-terminal) jobs only. */
  open?: boolean | undefined;
  limit?: number | undefined;
  /** Opaque cursor from a previous page. */
  cursor?: string | undefined;
}

export interface EffectQuery {
  status?: EffectStatus | undefined;
  provider?: string | undefined;
  jobId?: string | undefined;
  limit?: number | undefined;
  cursor?: string | undefined;
}

export type EffectOutcome =
  | { id: string; claimedUntil: number; kind: "delivered"; at: number }
  | { id: string; claimedUntil: number; kind: "retry"; at: number; nextAttemptAt: number; error: string }
  | { id: string; claimedUntil: number; kind: "dead"; at: number; error: string };

export interface StoreStats {
  jobsByState: Record<string, number>;
  openJobs: number;
  stuckJobs: number;
  conflictJobs: number;
  effectsByStatus: Record<string, number>;
  oldestOpenSubmittedAt: number | null;
  dueJobs: number;
}
