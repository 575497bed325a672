import { FinalityError, isFinalityError } from "../core/errors.js";
import type { Job } from "../core/model.js";
import type { TerminalState } from "../core/states.js";
import { clampLimit, decodeCursor, encodeCursor } from "./json-column.js";

/**
 * The settlement feed: every job settlement (its first terminal state) in commit order, behind an
 * opaque cursor. Each settlement's row is written by the database itself (a trigger on `jobs`)
 * in the transaction that settles the job, so no write path can settle a job without one.
 *
 * Commit order is what makes the cursor safe: a reader that has seen cursor `c` has seen every
 * settlement that committed before the one at `c`, and no later commit gets a cursor before `c`.
 * SQLite has one writer, so its row numbers are commit order. PostgreSQL numbers committed rows
 * when a reader comes, under an advisory lock (migration 0016; 0007 numbered them at COMMIT): a
 * plain sequence, numbered at insert, could commit 6 before 5, and a reader at 6 would never see 5.
 *
 * Kinds that arrive late. A job adopted from an early webhook settles with no kind; its kind comes
 * later, with a registration or an intent's attach. The database then writes an **amendment** in
 * that transaction (SQLite migration 0012, PostgreSQL 0011): a second entry for the same
 * settlement, with the kind, at its own place in commit order. A reader filtered by kind reads
 * amendments (the first entry, kind null, never matches it), so it sees the job once, by its
 * final kind, when the kind arrives; every other reader skips them and sees each settlement once.
 */
export interface Settlement {
  cursor: string;
  provider: string;
  id: string;
  /**
   * The job's kind when it settled; on an amendment, the kind that arrived after it settled.
   * A kind is filled once and never changed, so a job matches at most one kind filter.
   */
  kind: string | null;
  /**
   * True: not a new settlement but the kind of a job that settled without one, arriving. Only
   * a reader filtered by kind is given amendments; every other reader saw the settlement itself.
   */
  amendment: boolean;
  state: TerminalState;
  settledAt: number;
  settledBy: string | null;
  /** The job as it is now; null once retention deleted it. */
  job: Job | null;
}

export interface SettlementQuery {
  /** A cursor from an earlier answer: only settlements committed after it. Absent: from the start. */
  after?: string | undefined;
  limit?: number | undefined;
  provider?: string | undefined;
  kind?: string | undefined;
}

export interface SettlementPage {
  items: Settlement[];
  /** The last item's cursor, or the one passed in (null: the start) when nothing newer matched. */
  cursor: string | null;
}

export interface SettlementReads {
  readSettlements(query: SettlementQuery): Promise<SettlementPage>;
  /**
   * Resolves when a settlement may have committed since the call — on this process, or on
   * PostgreSQL on any replica (LISTEN/NOTIFY), with a slow poll behind it — or when `signal`
   * aborts. A wake-up is a hint to read again, not a promise of news: call this before reading,
   * then await it if the read found nothing, and no commit can fall between the two.
   */
  settlementCommitted(signal?: AbortSignal): Promise<void>;
}

/** A `settlements` row; `Time` is how the driver reads `settled_at` (SQLite: epoch ms, PostgreSQL: a Date). */
export interface SettlementRow<Time> {
  settlement_no: number;
  provider: string;
  job_id: string;
  kind: string | null;
  state: string;
  settled_at: Time;
  settled_by: string | null;
  /** 1: the kind of a job that settled without one, arriving (migration 0012 / 0011). */
  amendment: number;
}

/** The feed's item for a row, given its time in epoch ms and its job as it is now (null: deleted). */
export function settlementFromRow(
  row: SettlementRow<unknown>,
  settledAt: number,
  job: Job | null,
): Settlement {
  return {
    cursor: settlementCursor(row.settlement_no),
    provider: row.provider,
    id: row.job_id,
    kind: row.kind,
    state: row.state as TerminalState,
    settledAt,
    settledBy: row.settled_by,
    amendment: Number(row.amendment) === 1,
    job,
  };
}

/** Most settlements one read answers. */
export const MAX_SETTLEMENT_LIMIT = 1000;

/** The feed's row number a cursor holds (0: the start); refuses one this server did not give. */
export function settlementNumber(cursor: string | undefined): number {
  if (cursor === undefined || cursor === "") return 0;
  try {
    return decodeCursor(cursor) ?? 0;
  } catch (error) {
    if (!isFinalityError(error, "invalid-request")) throw error;
    throw new FinalityError("invalid-request", "after: not a settlement cursor this server gave", {
      details: { field: "after" },
    });
  }
}

/**
 * The page a query asks for, as SQL after `FROM settlements` and its values, for either dialect:
 * `placeholder(n)` spells the n-th parameter (`?` on SQLite, `$n` on PostgreSQL).
 */
export function settlementPageSql(
  query: SettlementQuery,
  placeholder: (n: number) => string,
): { sql: string; values: unknown[] } {
  const values: unknown[] = [];
  const param = (value: unknown) => {
    values.push(value);
    return placeholder(values.length);
  };
  const where = [`settlement_no > ${param(settlementNumber(query.after))}`];
  if (query.provider !== undefined) where.push(`provider = ${param(query.provider)}`);
  // A kind filter reads amendments: the kind of a job that settled without one arrived since
  // (its first entry, kind null, never matches). Every other reader saw that settlement already.
  if (query.kind !== undefined) where.push(`kind = ${param(query.kind)}`);
  else where.push("amendment = 0");
  const limit = param(clampLimit(query.limit, 100, MAX_SETTLEMENT_LIMIT));
  return { sql: `WHERE ${where.join(" AND ")} ORDER BY settlement_no LIMIT ${limit}`, values };
}

export const settlementCursor = (settlementNo: number): string => encodeCursor(settlementNo);

/**
 * Wakes the callers of `settlementCommitted` when the feed grew. `newest` is an adapter's cheap
 * look at its newest row number (0: none): it runs after a local commit and every `pollMs` while
 * someone waits, so settlements written by another process are seen too, only later.
 */
export function createSettlementSignal(newest: () => Promise<number> | number, pollMs: number) {
  let known = -1;
  async function check(): Promise<boolean> {
    const now = await newest();
    const grew = now > known;
    known = now;
    return grew;
  }
  const waiters = new Set<() => void>();
  let timer: ReturnType<typeof setInterval> | null = null;
  let checking = false;
  let again = false;

  function wakeAll(): void {
    const woken = [...waiters];
    waiters.clear();
    stopTimerIfIdle();
    for (const wake of woken) wake();
  }

  function stopTimerIfIdle(): void {
    if (waiters.size === 0 && timer !== null) {
      clearInterval(timer);
      timer = null;
    }
  }

  /** Runs `check` once at a time; a request while one runs is folded into one more run. */
  async function poke(): Promise<void> {
    if (waiters.size === 0) return;
    if (checking) {
      again = true;
      return;
    }
    checking = true;
    try {
      do {
        again = false;
        if (await check()) wakeAll();
      } while (again && waiters.size > 0);
    } catch {
      // A failed look (the database is down): the next commit or tick looks again.
    } finally {
      checking = false;
    }
  }

  return {
    /** A local commit happened (or another replica said so): look, and wake the waiters if the feed grew. */
    poke(): void {
      void poke();
    },
    /** Wakes every waiter without looking (a notification that already says the feed grew). */
    wakeAll,
    waiting: () => waiters.size,
    wait(signal?: AbortSignal): Promise<void> {
      return new Promise<void>((resolve) => {
        if (signal?.aborted) return resolve();
        const wake = () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        };
        const onAbort = () => {
          waiters.delete(wake);
          stopTimerIfIdle();
          resolve();
        };
        signal?.addEventListener("abort", onAbort, { once: true });
        waiters.add(wake);
        // Not unref'd: a process that waits for settlements (`finality settlements --follow`, a
        // library consumer's for-await) must stay alive while it waits.
        if (timer === null) timer = setInterval(() => void poke(), pollMs);
      });
    },
    close(): void {
      wakeAll();
    },
  };
}
