import { perChangedMask } from "../row-mapping.js";
import { detailOf, type RunStoreTx, type WriteEnd } from "../run-store.js";
import { ATTEMPTS, RUN_EVENTS, RUNS } from "../tables.js";
import type { TxSql } from "./postgres-client.js";
import { shifted } from "./postgres-queries.js";
import { attemptValues, runEventValues, runValues, toTime } from "./postgres-rows.js";

// Runs and attempts are read as one json column each (RUNS.postgres.selectArray, `AS r`), not
// `SELECT *`: node-postgres's cost per column of an answer (its description, an object per row)
// was most of what a worker's call spent in it (bench/README.md, "PostgreSQL: one column per row read").
const RUN = `${RUNS.postgres.selectArray} AS r`;
const ATTEMPT = `${ATTEMPTS.postgres.selectArray} AS r`;
type ArrayRow = { r: readonly unknown[] };
const runFromRow = (row: ArrayRow) => RUNS.postgres.fromArray(row.r);
const attemptFromRow = (row: ArrayRow) => ATTEMPTS.postgres.fromArray(row.r);

const SQL = {
  insertRun: `INSERT INTO runs ${RUNS.postgres.insert} ON CONFLICT DO NOTHING`,
  // Row locks make concurrent writers of one run (claim, callback, sweep) queue instead of
  // failing their compare-and-set; a lock cycle between them is a deadlock that the store retries.
  getRun: `SELECT ${RUN} FROM runs WHERE id = $1 FOR UPDATE`,
  // Sent right behind the attempt's own FOR UPDATE, in the same write: the attempt's row is
  // locked first, then the run's, the order every worker call has always taken them in.
  getRunOfAttempt: `SELECT ${RUN} FROM runs WHERE id = (SELECT run_id FROM attempts WHERE id = $1) FOR UPDATE`,
  getRunByKey: `SELECT ${RUN} FROM runs WHERE idempotency_key = $1`,
  updateRun: `UPDATE runs SET ${RUNS.postgres.assignments} WHERE id = $1 AND version = $${RUNS.postgres.columns.length + 1}`,
  // SKIP LOCKED: a replica claiming at the same moment takes the next queued run instead of
  // waiting for this one (and then finding it gone).
  pickAny: `SELECT ${RUN} FROM runs WHERE status = 'queued' AND NOT cancel_requested AND available_at <= $1
            ORDER BY run_no LIMIT 1 FOR UPDATE SKIP LOCKED`,
  // One kind (a worker pool's usual ask): the (kind, run_no) index in order, whatever the
  // statistics say. `kind = ANY(...)` leaves the plan to them: on a table filled faster than
  // autovacuum analyzes it, the generic plan read every queued run and sorted them, for each
  // claim (5 ms at 3,000 queued; bench/README.md, "Runs on PostgreSQL").
  pickByKind: `SELECT ${RUN} FROM runs WHERE status = 'queued' AND NOT cancel_requested AND available_at <= $1
               AND kind = $2 ORDER BY run_no LIMIT 1 FOR UPDATE SKIP LOCKED`,
  pickByKinds: `SELECT ${RUN} FROM runs WHERE status = 'queued' AND NOT cancel_requested AND available_at <= $1
                AND kind = ANY($2::text[]) ORDER BY run_no LIMIT 1 FOR UPDATE SKIP LOCKED`,
  insertAttempt: `INSERT INTO attempts ${ATTEMPTS.postgres.insert} ON CONFLICT DO NOTHING`,
  getAttempt: `SELECT ${ATTEMPT} FROM attempts WHERE id = $1 FOR UPDATE`,
  updateAttempt: `UPDATE attempts SET ${ATTEMPTS.postgres.assignments} WHERE id = $1 AND version = $${ATTEMPTS.postgres.columns.length + 1}`,
  appendRunEvent: `INSERT INTO run_events ${RUN_EVENTS.postgres.insert}
                   ON CONFLICT (dedupe_key) DO NOTHING`,
  // The detail alone, for the same reason as the json reads above.
  runEventDetailByKey: "SELECT detail FROM run_events WHERE dedupe_key = $1",
  // appendRunEvents' rows taken back, by their numbers (rows of this transaction's own).
  dropRunEvents: "DELETE FROM run_events WHERE event_no = ANY($1::bigint[])",
} as const;

/**
 * A write whose COMMIT may go out behind it (RunStoreTx's `end`): the same write, checking its own
 * count with finality_expect (migration 0013), whose error aborts the transaction.
 */
const expectCount = (write: string, count: number, what: string) =>
  `WITH written AS (${write} RETURNING 1)
   SELECT finality_expect(count(*) = ${count}, '${what}') AS written FROM written`;
const expectOne = (write: string, what: string) => expectCount(write, 1, what);

/** A write that must change one row: as sent when its answer is read here, and checked by PostgreSQL. */
interface CheckedWrite {
  readonly plain: string;
  readonly checked: string;
}
const checkedWrite = (plain: string, what: string): CheckedWrite => ({
  plain,
  checked: expectOne(plain, what),
});

/**
 * A CAS UPDATE of only the columns a write changed (the mapping's changedMask): `$1` the id,
 * the changed values next, the expected version last; prepared like the others.
 */
function partialUpdates(
  table: "runs" | "attempts",
  mapping: typeof RUNS.postgres | typeof ATTEMPTS.postgres,
) {
  const what = table === "runs" ? "the run changed concurrently" : "the attempt changed concurrently";
  return perChangedMask((mask) => {
    const versionParam = 2 + bitCount(mask);
    return checkedWrite(
      `UPDATE ${table} SET ${mapping.assignmentsFor(mask, 2)} WHERE id = $1 AND version = $${versionParam}`,
      what,
    );
  });
}

function bitCount(mask: number): number {
  let count = 0;
  for (let m = mask; m !== 0; m &= m - 1) count++;
  return count;
}

const partialRunUpdate = partialUpdates("runs", RUNS.postgres);
const partialAttemptUpdate = partialUpdates("attempts", ATTEMPTS.postgres);

const EVENT_PARAMS = RUN_EVENTS.postgres.columns.length;
const eventBatches = new Map<number, CheckedWrite>();

/**
 * appendRunEvents' statement for `count` events, the parameters of each after the one before's:
 * one INSERT, its VALUES rows taking their event_no (an identity) one after another, in the order
 * given. Built once per count (a claim's writes take 1 to 3) and prepared like the others. The
 * plain form answers the numbers it wrote (RETURNING), which an all-or-nothing false takes back.
 */
function eventBatch(count: number): CheckedWrite {
  let batch = eventBatches.get(count);
  if (batch === undefined) {
    const rows = Array.from(
      { length: count },
      (_, i) => `(${shifted(RUN_EVENTS.postgres.valueList, i * EVENT_PARAMS)})`,
    );
    const write = `INSERT INTO run_events (${RUN_EVENTS.postgres.columns.join(", ")})
                   VALUES ${rows.join(", ")} ON CONFLICT (dedupe_key) DO NOTHING`;
    batch = {
      plain: `${write} RETURNING event_no`,
      checked: expectCount(write, count, "a run event was recorded already"),
    };
    eventBatches.set(count, batch);
  }
  return batch;
}

export const PICK_NO_SORT = "SET LOCAL enable_sort = off";

/** A claim's pick, by what the worker asks for (test/store/postgres-runs.test.ts reads their plans). */
export const PICK_SQL = { any: SQL.pickAny, oneKind: SQL.pickByKind, kinds: SQL.pickByKinds } as const;

/**
 * The pick for the kinds a worker asks for (null: any kind; at least one otherwise). `sorts`: the
 * planner could choose to sort for it (any kind, several), so the claim rules sorting out first;
 * for one kind the (kind, run_no) index fits whatever the statistics (test/store/postgres-runs.test.ts).
 */
export function pickStatement(
  kinds: readonly string[] | null,
  at: string | Date,
): { text: string; values: unknown[]; sorts: boolean } {
  if (kinds === null) return { text: PICK_SQL.any, values: [at], sorts: true };
  const distinct = [...new Set(kinds)];
  return distinct.length === 1
    ? { text: PICK_SQL.oneKind, values: [at, distinct[0]], sorts: false }
    : { text: PICK_SQL.kinds, values: [at, distinct], sorts: true };
}

const WRITES = {
  insertRun: checkedWrite(SQL.insertRun, "the run was inserted concurrently"),
  updateRun: checkedWrite(SQL.updateRun, "the run changed concurrently"),
  insertAttempt: checkedWrite(SQL.insertAttempt, "the attempt was inserted concurrently"),
  updateAttempt: checkedWrite(SQL.updateAttempt, "the attempt changed concurrently"),
  appendRunEvent: checkedWrite(SQL.appendRunEvent, "the run event was recorded already"),
} as const;

const endOptions = (end: WriteEnd) =>
  end === "last" ? { prepare: true, last: true } : { prepare: true, beside: true };

/** A bound parameter: node-postgres sends each as text (JSON is cast with `::text::jsonb`). */
type Value = unknown;

/** The runs part of the PostgreSQL StoreTx, on the transaction's connection. */
export function createPostgresRunTx(tx: TxSql): RunStoreTx {
  const run = <T = Record<string, unknown>>(text: string, values: readonly unknown[]) =>
    tx.unsafe(text, values as Value[], { prepare: true }) as unknown as Promise<T[] & { count: number }>;
  const one = async <R, T>(text: string, values: readonly unknown[], map: (row: R) => T) => {
    const [row] = await run<R>(text, values);
    return row ? map(row) : null;
  };
  // The first statements of a claim or a worker's call: reads, sent with BEGIN (one round trip).
  // Were BEGIN to fail they changed nothing (their row locks would end with them), and no answer
  // is trusted before BEGIN's.
  const firstRead = async <R, T>(text: string, values: readonly unknown[], map: (row: R) => T) => {
    const [row] = (await tx.unsafe(text, values as Value[], {
      prepare: true,
      withBegin: true,
    })) as unknown as R[];
    return row ? map(row) : null;
  };

  /**
   * A CAS write or an insert that must change one row: checked by PostgreSQL itself when its
   * COMMIT may go out before its answer (`end` on a transaction that commits ahead), else here.
   */
  async function writesOne(write: CheckedWrite, values: readonly unknown[], end?: WriteEnd) {
    if (end === undefined || !tx.commitsAhead) return (await run(write.plain, values)).count === 1;
    await tx.unsafe(write.checked, values as Value[], endOptions(end));
    return true; // finality_expect raised otherwise
  }

  return {
    insertRun: (value, end) => writesOne(WRITES.insertRun, runValues(value), end),
    getRun: (id) => one(SQL.getRun, [id], runFromRow),
    getRunOfAttempt: (attemptId) => firstRead(SQL.getRunOfAttempt, [attemptId], runFromRow),
    getRunByIdempotencyKey: (key) => one(SQL.getRunByKey, [key], runFromRow),
    updateRun(value, expectedVersion, end, previous) {
      const mask = previous === undefined ? -1 : RUNS.postgres.changedMask(previous, value);
      const partial = mask > 0 ? partialRunUpdate(mask) : undefined;
      if (partial === undefined)
        return writesOne(WRITES.updateRun, [...runValues(value), expectedVersion], end);
      const values = RUNS.postgres.maskedChanges(value, mask);
      values.unshift(value.id);
      values.push(expectedVersion);
      return writesOne(partial, values, end);
    },
    async pickClaimableRun(kinds, now) {
      if (kinds !== null && kinds.length === 0) return null;
      const { text, values, sorts } = pickStatement(kinds, toTime(now));
      if (!sorts) return firstRead(text, values, runFromRow);
      // Sorting is ruled out for this claim's transaction (its writes sort nothing): a pick of any
      // kind, or of several, then walks the queued index in run order and stops at the first it
      // can lock, whatever the statistics say (without them it was planned as a sort of every
      // queued run). In the same write as BEGIN; outside a transaction it would change nothing.
      const [, run] = await Promise.all([
        tx.unsafe(PICK_NO_SORT, [], { withBegin: true }),
        firstRead(text, values, runFromRow),
      ]);
      return run;
    },
    insertAttempt: (attempt, end) => writesOne(WRITES.insertAttempt, attemptValues(attempt), end),
    getAttempt: (id) => firstRead(SQL.getAttempt, [id], attemptFromRow),
    updateAttempt(attempt, expectedVersion, end, previous) {
      const mask = previous === undefined ? -1 : ATTEMPTS.postgres.changedMask(previous, attempt);
      const partial = mask > 0 ? partialAttemptUpdate(mask) : undefined;
      if (partial === undefined) {
        return writesOne(WRITES.updateAttempt, [...attemptValues(attempt), expectedVersion], end);
      }
      const values = ATTEMPTS.postgres.maskedChanges(attempt, mask);
      values.unshift(attempt.id);
      values.push(expectedVersion);
      return writesOne(partial, values, end);
    },
    appendRunEvent: (event, end) => writesOne(WRITES.appendRunEvent, runEventValues(event), end),
    async appendRunEvents(events, end) {
      if (events.length === 0) return true;
      const batch = eventBatch(events.length);
      const values = events.flatMap((event) => runEventValues(event));
      if (end !== undefined && tx.commitsAhead) {
        await tx.unsafe(batch.checked, values as Value[], endOptions(end));
        return true; // finality_expect raised otherwise
      }
      const written = await run<{ event_no: string }>(batch.plain, values);
      if (written.length === events.length) return true;
      // All or nothing: DO NOTHING skipped only the rows whose key was used, so the others are
      // taken back. They are this transaction's own, seen and locked by no one else.
      if (written.length > 0) await run(SQL.dropRunEvents, [written.map((row) => row.event_no)]);
      return false;
    },
    runEventDetail: (dedupeKey) =>
      firstRead(SQL.runEventDetailByKey, [dedupeKey], (row: { detail: unknown }) => detailOf(row.detail)),
  };
}
