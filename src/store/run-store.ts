import type { Attempt, NewRunEvent, Run, RunEvent, RunStatus } from "../core/run-model.js";

/**
 * The runs part of the store port (runs on the application's own workers). `Store` and
 * `StoreTx` extend these; every adapter implements them with the same semantics.
 */

/** Writes and locking reads inside one transaction. */
/**
 * Where a write stands in its work (PostgreSQL: postgres-client.ts, QueryOptions): `last`, the
 * work sends nothing after it; `beside`, it goes out in the same write as that last one. The
 * store may then send the COMMIT behind them, before their answers: it makes such a write check
 * itself, a failed check ending the transaction (FNL01: the work runs again the ordinary way)
 * instead of answering false. A store that commits after the answers ignores it.
 */
export type WriteEnd = "last" | "beside";

export interface RunStoreTx {
  /** Inserts a run; false when its id or idempotency key exists already (a race: re-run). */
  insertRun(run: Run, end?: WriteEnd): Promise<boolean>;
  /** The run, locked for this transaction where the database locks rows (PostgreSQL: FOR UPDATE). */
  getRun(id: string): Promise<Run | null>;
  /**
   * The run of an attempt, locked like `getRun`; asked together with `getAttempt` (one round trip
   * on PostgreSQL, both sent with BEGIN), the attempt's row locked first.
   */
  getRunOfAttempt(attemptId: string): Promise<Run | null>;
  getRunByIdempotencyKey(key: string): Promise<Run | null>;
  /**
   * Writes `run` if the stored version is still `expectedVersion`; false otherwise (CAS).
   * `previous`: the run as read at that version; the store may then write only the columns that
   * differ from it (`!==`), the rest being the stored row's already.
   */
  updateRun(run: Run, expectedVersion: number, end?: WriteEnd, previous?: Run): Promise<boolean>;
  /**
   * The oldest claimable run: status `queued`, not cancel-requested, `availableAt <= now`, of
   * one of `kinds` (any kind when null), in enqueue order; locked so that no concurrent claim
   * takes it (PostgreSQL: FOR UPDATE SKIP LOCKED; SQLite: the write transaction itself).
   */
  pickClaimableRun(kinds: readonly string[] | null, now: number): Promise<Run | null>;
  /** Inserts an attempt; false when its id, or its (run, generation), exists already. */
  insertAttempt(attempt: Attempt, end?: WriteEnd): Promise<boolean>;
  /** The attempt, locked like `getRun`. */
  getAttempt(id: string): Promise<Attempt | null>;
  /** CAS on the attempt's version, like `updateRun` (and `previous` as there). */
  updateAttempt(
    attempt: Attempt,
    expectedVersion: number,
    end?: WriteEnd,
    previous?: Attempt,
  ): Promise<boolean>;
  /** Appends to the run's audit trail; false (and nothing written) if the dedupe key was used. */
  appendRunEvent(event: NewRunEvent, end?: WriteEnd): Promise<boolean>;
  /**
   * Appends several events as one write (PostgreSQL: one statement), numbered in the order given:
   * true iff every one was new. All or nothing: when one's dedupe key was used (by an earlier
   * event or by another of these), false, and none of them is written; the transaction goes on,
   * as after `appendRunEvent`'s false. `end` as for `appendRunEvent`: where the COMMIT may go out
   * behind it, a used key fails the transaction instead of answering false. An empty list writes
   * nothing and sends nothing (so it cannot stand as a work's `last` write).
   */
  appendRunEvents(events: readonly NewRunEvent[], end?: WriteEnd): Promise<boolean>;
  /**
   * The detail of the event recorded with this dedupe key (`{}` when it has none), null when no
   * event has the key; asked together with `getAttempt` (one round trip on PostgreSQL), after the
   * attempt's row lock. (A retried worker call reads in it what its first call did.)
   */
  runEventDetail(dedupeKey: string): Promise<Record<string, unknown> | null>;
}

/** Reads outside transactions (committed data only). */
export interface RunStore {
  getRun(id: string): Promise<Run | null>;
  listRuns(query: RunQuery): Promise<RunPage>;
  /** A run's attempts, oldest (lowest generation) first. */
  runAttempts(runId: string): Promise<Attempt[]>;
  /** A run's events in the order written, after `after` (a seqNo), at most `limit`. */
  runEvents(runId: string, page?: { limit?: number; after?: number }): Promise<RunEvent[]>;
  /** Leases whose expiry has come (`leaseExpiresAt <= now`), soonest first, at most `limit`. */
  dueLeases(now: number, limit: number): Promise<DueLease[]>;
  /** Runs by status, for metrics. */
  runStats(): Promise<Partial<Record<RunStatus, number>>>;
}

export interface DueLease {
  attemptId: string;
  runId: string;
  leaseExpiresAt: number;
}

export interface RunQuery {
  status?: RunStatus | undefined;
  kind?: string | undefined;
  limit?: number | undefined;
  /** Opaque cursor from a previous page; pages go newest first. */
  cursor?: string | undefined;
}

export interface RunPage {
  items: Run[];
  nextCursor: string | null;
}

/** A run event's detail as a worker call reads it back (`runEventDetail`): an object, `{}` for none. */
export function detailOf(detail: unknown): Record<string, unknown> {
  return typeof detail === "object" && detail !== null ? (detail as Record<string, unknown>) : {};
}
