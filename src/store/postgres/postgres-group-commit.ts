import { FinalityError, isFinalityError } from "../../core/errors.js";
import { type AdapterTx, lockedRowsOf } from "../store.js";
import {
  isLockNotAvailable,
  isLostConnection,
  NOT_LAST,
  type Sql,
  sqlState,
  type TxSql,
  toStoreError,
} from "./postgres-client.js";

/** Settings of the PostgreSQL group commit (config keys store.groupCommitMaxBatch / MaxWaitMs). */
interface PostgresGroupCommitOptions {
  /** Most callers in one transaction (32); 1 turns group commit off. */
  maxBatch: number;
  /** How long a group is collected before it starts (0: until the event loop is idle). */
  maxWaitMs: number;
  /** Groups in flight at once on this replica, each on its own connection. */
  concurrency: number;
  /** Runs of one caller's work after a version conflict, deadlock or serialization failure. */
  maxAttempts: number;
  /**
   * lock_timeout inside a group's transaction (and a lone caller's), in ms: how long a caller may
   * hold its batch-mates while it waits for a row lock before it is moved out of the group.
   */
  lockWaitMs: number;
  /** The store's lock_timeout: how long a caller moved out of groups keeps trying before its 503. */
  lockTimeoutMs: number;
}

/** What the group commit has done since the store opened, for tests and /metrics. */
export interface GroupCommitStats {
  /** Transactions committed or rolled back holding more than one caller. */
  batches: number;
  /** Callers that went through those transactions. */
  batchedCallers: number;
  largestBatch: number;
  /** Callers re-queued for the next group after a deadlock (40P01) or serialization failure (40001). */
  lockRetries: number;
  /** The same re-runs by reason, plus a caller's work re-run at once in its savepoint after a version conflict. */
  retries: Record<GroupCommitRetryReason, number>;
  /** Callers answered 503 after another transaction held their row for the whole lock_timeout. */
  lockTimeouts: number;
}

/**
 * Why a caller's work ran again: a deadlock, a serialization failure, a lost insert race, a
 * row lock held by another transaction (the caller left the group and tried again later), or a
 * last statement that found more to do (NOT_LAST: run again in its savepoint).
 */
type GroupCommitRetryReason = "deadlock" | "serialization" | "version-conflict" | "lock-busy" | "not-last";

interface Queued {
  work: (tx: AdapterTx) => Promise<unknown>;
  /** Batch-mates run in this order (the job key), so that two replicas lock rows in the same order. */
  order: string;
  attempts: number;
  /** When this caller first found its row locked by another transaction (performance.now()). */
  lockBusySince?: number;
  /** How often it has found it so since. */
  lockBusyRuns: number;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome =
  | { kind: "done"; value: unknown }
  | { kind: "failed"; error: unknown }
  | { kind: "again" }
  | { kind: "busy"; error: unknown };

const SAVEPOINT = "finality_group";
/** Callers queued before a second group starts beside a running one (see schedule). */
const MIN_PARALLEL_GROUP = 8;
/**
 * The session is over (the socket failed, or the server ended it: 08 connection exception, 57P
 * shutdown), so no statement of the group can run again on it.
 */
function connectionGone(error: unknown): boolean {
  return isLostConnection(error) || /^(08|57P)/.test(sqlState(error) ?? "");
}

/** A caller's work as it ended in the group: its value, or what it threw. */
type Settled = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * Why a group is rolled back: every caller's own failure, in the group's order. A statement that
 * PostgreSQL refused only because another had failed first (25P02: the transaction is aborted;
 * 26000: the statement's preparation went out in that other's round trip and failed with it) is
 * not its caller's failure: that caller just runs again. Only if nothing else failed is the first
 * of those taken for the cause.
 */
function failuresOf(settled: readonly Settled[]): { at: number; error: unknown }[] {
  const own: { at: number; error: unknown }[] = [];
  let collateral: { at: number; error: unknown } | undefined;
  for (const [at, outcome] of settled.entries()) {
    if (outcome.ok) continue;
    const state = sqlState(outcome.error);
    if (state === "25P02" || state === "26000") collateral ??= { at, error: outcome.error };
    else own.push({ at, error: outcome.error });
  }
  return own.length > 0 || collateral === undefined ? own : [collateral];
}

/** Thrown out of a group's transaction to roll it back after one caller's work failed. */
const ROLL_BACK = Symbol("roll back the group");

/**
 * Group commit for the PostgreSQL store: transactions requested while a group is being collected
 * share one READ COMMITTED transaction (one WAL flush). The callers' works run at once, without
 * savepoints (a savepoint per caller costs a round trip each), their statements pipelined: a
 * group's loads share one round trip, its writes another (runTogether); when one fails, the group
 * is rolled back, that caller is answered (or re-queued), and the others run again, each inside
 * its own SAVEPOINT this time, so a further failure rolls back only its own writes. This is what
 * the SQLite group commit does. Every caller is answered only after the shared COMMIT has
 * returned: a lost connection or failed COMMIT rejects the whole group, nobody having been told
 * success.
 *
 * Deadlocks: a caller's work locks its job's rows (delivery, job, events, outbox). Batch-mates
 * are sorted by `order` (the job key) and send each round trip's statements in that order, so
 * every group on every replica takes row locks in one global order, and two groups cannot wait on
 * each other in a cycle. (A job's row that is inserted, not loaded, is locked in the writes' round
 * trip, after the loads: two groups that meet there are cut by the short lock_timeout below,
 * as any wait is.) Work given no order key
 * runs alone, as before. A deadlock or serialization failure that still happens (a transaction
 * outside the group commit) rolls back only that caller's work; it is re-run in a later
 * group, after this one has committed and released its locks, at most `maxAttempts` times.
 *
 * Lock waits: a caller whose row another transaction holds (a peer replica's group, or a frozen
 * replica's) must not hold its batch-mates, nor the rows they locked, while it waits. Every
 * transaction here runs with a short `lock_timeout` (`lockWaitMs`, SET LOCAL); a caller that
 * does not get its lock in that time rolls back its work and leaves the group (with its
 * batch-mates of the same job, which would wait for the same row), and the group goes on and
 * commits. It tries again in a later group after a growing pause, holding no connection in
 * between, until the store's `lockTimeoutMs` has passed since it first found the row locked;
 * then it is answered 503 `store-unavailable`, as a lock_timeout would have answered it.
 * (Waiting alone on a connection of its own was not chosen: a burst for one locked job would
 * take the whole pool, and with it every unrelated caller.)
 *
 * Why: each ingest on PostgreSQL was its own transaction and WAL flush, ~723/s on one connection.
 */
export function createPostgresGroupCommitter(
  sql: Sql,
  options: PostgresGroupCommitOptions,
  hooks: {
    /** Resolves once the store is open (migrated). */
    opened: () => Promise<unknown>;
    /**
     * One caller's work in its own transaction, with the store's usual retries; with
     * `lockWaitMs`, a lock not had in that time fails it (store-unavailable, caused by 55P03).
     */
    alone: <T>(work: (tx: AdapterTx) => Promise<T>, lockWaitMs?: number) => Promise<T>;
    /** The store's transaction over a connection's (what the schema it found can do). */
    newTx: (tx: TxSql) => AdapterTx;
  },
) {
  const stats: GroupCommitStats = {
    batches: 0,
    batchedCallers: 0,
    largestBatch: 0,
    lockRetries: 0,
    retries: { deadlock: 0, serialization: 0, "version-conflict": 0, "lock-busy": 0, "not-last": 0 },
    lockTimeouts: 0,
  };
  let queue: Queued[] = [];
  let running = 0;
  let scheduled: "immediate" | "timer" | null = null;
  let timer: NodeJS.Timeout | undefined;
  const idle = new Set<() => void>();
  /** Callers out of the group for a locked row, waiting for their next try (no connection held). */
  let pausing = 0;
  const quiet = () => running === 0 && queue.length === 0 && pausing === 0;

  function schedule(): void {
    if (queue.length === 0 || running >= options.concurrency) return;
    // While a group is running, the next starts only once it would not be a small one: a group's
    // statements share round trips (runTogether), so one group of many costs what one of a few
    // does. A running group that waits (a locked row) holds back no more than MIN_PARALLEL_GROUP.
    if (running > 0 && queue.length < Math.min(MIN_PARALLEL_GROUP, options.maxBatch)) return;
    if (queue.length >= options.maxBatch || options.maxWaitMs <= 0) {
      if (scheduled === "immediate") return;
      clearTimeout(timer);
      scheduled = "immediate";
      // setImmediate lets requests already read from sockets join this group.
      setImmediate(flush);
    } else if (scheduled === null) {
      scheduled = "timer";
      timer = setTimeout(flush, options.maxWaitMs);
    }
  }

  function flush(): void {
    scheduled = null;
    clearTimeout(timer);
    if (queue.length === 0 || running >= options.concurrency) return;
    const batch = queue.splice(0, options.maxBatch);
    running++;
    void runBatch(batch).finally(() => {
      running--;
      schedule();
      if (quiet()) for (const resolve of idle) resolve();
    });
  }

  async function runBatch(batch: Queued[]): Promise<void> {
    if (batch.length === 1) {
      // Nothing to share: a plain transaction, without the savepoint's round trips.
      const [item] = batch as [Queued];
      await hooks.alone(item.work, options.lockWaitMs).then(item.resolve, (error: unknown) => {
        if (isLockNotAvailable(error)) tryLater(item, error);
        else item.reject(error);
      });
      return;
    }
    // Array.prototype.sort is stable: callers with the same key keep their arrival order.
    batch.sort((a, b) => (a.order < b.order ? -1 : a.order > b.order ? 1 : 0));
    stats.batches++;
    stats.batchedCallers += batch.length;
    stats.largestBatch = Math.max(stats.largestBatch, batch.length);
    const rest = await runWithoutSavepoints(batch);
    if (rest.length > 0) await runWithSavepoints(rest);
  }

  /**
   * The common case: every caller's work one after another in one transaction, no savepoint (each
   * would cost a round trip per caller). When a work fails, the whole group is rolled back: that
   * caller is answered, re-queued or set aside as it would have been in its savepoint, and the
   * callers left over are returned, to run again with a savepoint each (runWithSavepoints).
   * Nobody is answered success before the COMMIT has returned.
   */
  async function runWithoutSavepoints(batch: Queued[]): Promise<Queued[]> {
    let settled: Settled[] = [];
    let failures: { at: number; error: unknown }[] = [];
    // Works that may still send a statement, or -1 once one failed: the COMMIT may go out behind
    // the last statements of all those left (TransactionSettings.worksLeft), never after a failure.
    let worksLeft = batch.length;
    const finished = (ok: boolean) => {
      worksLeft = ok && worksLeft > 0 ? worksLeft - 1 : -1;
    };
    try {
      await hooks.opened();
      await sql.begin(
        "isolation level read committed",
        async (tx) => {
          settled = await runTogether(batch, hooks.newTx(tx), finished);
          failures = failuresOf(settled);
          // A dead connection fails the group as a whole, as at COMMIT: nothing is committed.
          const gone = failures.find((failure) => connectionGone(failure.error));
          if (gone !== undefined) throw gone.error;
          if (failures.length > 0) throw ROLL_BACK;
        },
        { lockTimeoutMs: options.lockWaitMs, together: true, worksLeft: () => worksLeft },
      );
    } catch (error) {
      if (error !== ROLL_BACK) {
        // The connection died, or COMMIT failed: nothing of this group is committed.
        const failure = toStoreError(error, "group commit");
        for (const item of batch) item.reject(failure);
        return [];
      }
      return afterFailures(batch, failures);
    }
    for (const [at, item] of batch.entries()) item.resolve((settled[at] as { value: unknown }).value);
    return [];
  }

  /**
   * Every caller's work at once, in the group's order: the driver pipelines what they send, so the
   * group's loads go out in one round trip (with BEGIN), then its writes in another, rather than
   * two round trips per caller. Batch-mates of the same job run one after another, as they would
   * alone (the second reads what the first wrote). Locks are still taken in one global order:
   * each round trip's statements in job order. Settles once every work has.
   */
  async function runTogether(
    batch: Queued[],
    storeTx: AdapterTx,
    finished: (ok: boolean) => void,
  ): Promise<Settled[]> {
    const settled: Settled[] = new Array(batch.length);
    const last = new Map<string, Promise<void>>();
    const runs = batch.map((item, at) => {
      const run = async () => {
        try {
          settled[at] = { ok: true, value: await item.work(storeTx) };
          finished(true);
        } catch (error) {
          settled[at] = { ok: false, error };
          finished(false);
        }
      };
      const rows = lockedRowsOf(item.order);
      const before = last.get(rows);
      // The first of a job starts now, so that the statements go out in the group's order.
      const running = before === undefined ? run() : before.then(run);
      last.set(rows, running);
      return running;
    });
    await Promise.all(runs);
    return settled;
  }

  /**
   * The group was rolled back after the callers in `failures` failed: each is dealt with as in
   * its savepoint (see runInSavepoint); the callers to run again are returned.
   */
  function afterFailures(batch: Queued[], failures: readonly { at: number; error: unknown }[]): Queued[] {
    const leaving = new Set<Queued>();
    for (const { at, error } of failures) {
      const item = batch[at] as Queued;
      if (leaving.has(item)) continue;
      item.attempts++;
      const next = verdict(item, error);
      if (next === "now") continue;
      if (next === "busy") {
        // Its batch-mates of the same job after it would wait for the same row: they leave with it.
        const rows = lockedRowsOf(item.order);
        const mates = batch.filter((other, i) => i > at && lockedRowsOf(other.order) === rows);
        for (const busy of [item, ...mates]) {
          if (leaving.has(busy)) continue;
          leaving.add(busy);
          tryLater(busy, error);
        }
        continue;
      }
      leaving.add(item);
      if (next === "later") {
        stats.lockRetries++;
        queue = [item, ...queue];
      }
      // Its writes are rolled back: telling it now tells no one of anything uncommitted.
      else item.reject(toStoreError(error, "transaction"));
    }
    return batch.filter((item) => !leaving.has(item));
  }

  /** The slow path, after a failure: each caller in its own savepoint, so each fails alone. */
  async function runWithSavepoints(batch: Queued[]): Promise<void> {
    const done: [Queued, unknown][] = [];
    const again: Queued[] = [];
    const busy: [Queued, unknown][] = [];
    try {
      await hooks.opened();
      await sql.begin(
        "isolation level read committed",
        async (tx) => {
          const storeTx = hooks.newTx(tx);
          // After a caller's work succeeded its savepoint is released and a new one set; after one
          // was rolled back to, the savepoint still marks the same state and serves the next caller.
          let fresh = true;
          await tx.unsafe(`SAVEPOINT ${SAVEPOINT}`);
          for (const item of batch) {
            // Sorted by job: a batch-mate of a job whose row is locked would wait for the same row.
            const locked = busy.at(-1);
            if (locked !== undefined && lockedRowsOf(locked[0].order) === lockedRowsOf(item.order)) {
              busy.push([item, locked[1]]);
              continue;
            }
            if (!fresh) await tx.unsafe(`RELEASE SAVEPOINT ${SAVEPOINT}; SAVEPOINT ${SAVEPOINT}`);
            const outcome = await runInSavepoint(tx, storeTx, item);
            fresh = outcome.kind !== "done";
            if (outcome.kind === "done") done.push([item, outcome.value]);
            else if (outcome.kind === "again") again.push(item);
            else if (outcome.kind === "busy") busy.push([item, outcome.error]);
            // Its writes are rolled back: telling it now tells no one of anything uncommitted.
            else item.reject(outcome.error);
          }
        },
        { lockTimeoutMs: options.lockWaitMs },
      );
    } catch (error) {
      // The connection died, or COMMIT failed: nothing of this group is committed.
      const failure = toStoreError(error, "group commit");
      // A caller already rejected with its own error keeps it: a promise settles once.
      for (const item of batch) item.reject(failure);
      return;
    }
    for (const [item, value] of done) item.resolve(value);
    for (const [item, error] of busy) tryLater(item, error);
    if (again.length > 0) {
      stats.lockRetries += again.length;
      queue = [...again, ...queue];
    }
  }

  async function runInSavepoint(tx: TxSql, storeTx: AdapterTx, item: Queued): Promise<Outcome> {
    for (;;) {
      item.attempts++;
      try {
        return { kind: "done", value: await item.work(storeTx) };
      } catch (error) {
        // Throws when the connection is gone: the caller's own error no longer matters then.
        await tx.unsafe(`ROLLBACK TO SAVEPOINT ${SAVEPOINT}`);
        const next = verdict(item, error);
        if (next === "now") continue;
        if (next === "busy") return { kind: "busy", error };
        if (next === "later") return { kind: "again" };
        return { kind: "failed", error: toStoreError(error, "transaction") };
      }
    }
  }

  /**
   * What a caller's failed run calls for, its retry counted: to run again at once (a lost race on
   * a row: an insert that found the key taken), to leave the group for a while (another
   * transaction holds its row; not a run that counts against maxAttempts, since lockTimeoutMs
   * bounds that wait), to join a later group (a deadlock or serialization failure), or its answer.
   */
  function verdict(item: Queued, error: unknown): "now" | "busy" | "later" | "failed" {
    const retryable = item.attempts < options.maxAttempts;
    if (isFinalityError(error, "version-conflict") && retryable) {
      stats.retries["version-conflict"]++;
      return "now";
    }
    const state = sqlState(error);
    if (state === NOT_LAST) {
      // Its last statement found more to do (a tombstone, parked observations, a lost insert
      // race): run again at once, in its savepoint, where the COMMIT waits for every answer.
      item.attempts--;
      stats.retries["not-last"]++;
      return "now";
    }
    if (state === "55P03") {
      item.attempts--;
      return "busy";
    }
    if ((state === "40P01" || state === "40001") && retryable) {
      stats.retries[state === "40P01" ? "deadlock" : "serialization"]++;
      return "later";
    }
    return "failed";
  }

  /**
   * A caller whose row was locked: queued again after a pause that grows (lockWaitMs, doubled up
   * to 16 times that), or answered 503 once it has found the row locked for `lockTimeoutMs`.
   */
  function tryLater(item: Queued, error: unknown): void {
    const now = performance.now();
    item.lockBusySince ??= now;
    if (now - item.lockBusySince >= options.lockTimeoutMs) {
      stats.lockTimeouts++;
      item.reject(
        new FinalityError(
          "store-unavailable",
          `transaction: a row it needs has been locked by another transaction for ${Math.round(now - item.lockBusySince)} ms (lock_timeout)`,
          { cause: error, retryAfterMs: 1000 },
        ),
      );
      return;
    }
    stats.retries["lock-busy"]++;
    const pause = options.lockWaitMs * 2 ** Math.min(4, item.lockBusyRuns++);
    pausing++;
    setTimeout(() => {
      pausing--;
      queue.push(item);
      schedule();
    }, pause);
  }

  return {
    stats: (): GroupCommitStats => ({ ...stats, retries: { ...stats.retries } }),
    enqueue<T>(work: (tx: AdapterTx) => Promise<T>, order: string | undefined): Promise<T> {
      if (order === undefined || options.maxBatch <= 1) return hooks.alone(work);
      return new Promise<T>((resolve, reject) => {
        const resolveAny = resolve as (value: unknown) => void;
        queue.push({ work, order, attempts: 0, lockBusyRuns: 0, resolve: resolveAny, reject });
        schedule();
      });
    },
    /** Resolves once every queued caller has been answered. */
    drain(): Promise<void> {
      if (quiet()) return Promise.resolve();
      return new Promise((resolve) => {
        const done = () => {
          idle.delete(done);
          resolve();
        };
        idle.add(done);
      });
    },
  };
}
