import { TERMINAL_STATES } from "../core/states.js";
import { clampLimit, decodeCursor, encodeCursor } from "./json-column.js";
import type { ParkedQuery } from "./lifecycle-store.js";
import type { RunQuery } from "./run-store.js";
import type { EffectQuery, JobQuery, Page } from "./store.js";

/** A SQL condition with `?` where each of its values goes. */
type Condition = readonly [clause: string, ...values: unknown[]];

/** `column = value`, or no condition when the filter is not set. */
const equals = (column: string, value: unknown): Condition | undefined =>
  value === undefined ? undefined : [`${column} = ?`, value];

export interface KeysetQuery {
  table: string;
  /** The row-number column: pages run newest first on it, and a cursor is its last value. */
  rowNo: string;
  /** The filters; an `undefined` entry (a filter not set) is skipped. */
  where: readonly (Condition | undefined)[];
  cursor: string | undefined;
  limit: number | undefined;
}

export interface KeysetStatement {
  text: string;
  values: unknown[];
  /** The page size asked for; the statement reads one row more, to tell whether a next page exists. */
  limit: number;
}

/**
 * Every list of the store (jobs, effects, parked, runs) pages the same way: newest first, keyset on
 * a row number, the cursor its last value. One statement builder for both dialects: `?` stays
 * `?` on SQLite and becomes `$1`, `$2`, … on PostgreSQL.
 */
export function keysetStatement(query: KeysetQuery, dialect: "sqlite" | "postgres"): KeysetStatement {
  const after = decodeCursor(query.cursor);
  const limit = clampLimit(query.limit);
  const conditions = [...query.where, after === null ? undefined : ([`${query.rowNo} < ?`, after] as const)];
  const clauses: string[] = [];
  const values: unknown[] = [];
  for (const condition of conditions) {
    if (condition === undefined) continue;
    const [clause, ...params] = condition;
    clauses.push(clause);
    values.push(...params);
  }
  values.push(limit + 1);
  const where = clauses.length > 0 ? ` WHERE ${clauses.join(" AND ")}` : "";
  let text = `SELECT * FROM ${query.table}${where} ORDER BY ${query.rowNo} DESC LIMIT ?`;
  if (dialect === "postgres") {
    let n = 0;
    text = text.replace(/\?/g, () => `$${++n}`);
  }
  return { text, values, limit };
}

/** The page of `rows` (read with one row more than `limit`) and the cursor of the next, if any. */
export function keysetPage<Row, Item>(
  rows: readonly Row[],
  limit: number,
  fromRow: (row: Row) => Item,
  rowNo: (row: Row) => number,
): Page<Item> {
  const more = rows.length > limit;
  const items = more ? rows.slice(0, limit) : rows;
  const last = items.at(-1);
  return {
    items: items.map(fromRow),
    nextCursor: more && last !== undefined ? encodeCursor(rowNo(last)) : null,
  };
}

const TERMINAL_LIST = TERMINAL_STATES.map((state) => `'${state}'`).join(", ");

// The store's lists, the same on every database: only `stuck` is spelled per dialect (a boolean
// column on PostgreSQL, 0/1 on SQLite), each as its partial index is written.

export const jobsPage = (query: JobQuery, dialect: "sqlite" | "postgres"): KeysetQuery =>
  pageOf(
    "jobs",
    "job_no",
    [
      equals("state", query.state),
      equals("provider", query.provider),
      equals("kind", query.kind),
      query.stuck === undefined ? undefined : [stuckClause(query.stuck, dialect)],
      query.open ? [`state NOT IN (${TERMINAL_LIST})`] : undefined,
    ],
    query,
  );

function stuckClause(stuck: boolean, dialect: "sqlite" | "postgres"): string {
  if (dialect === "postgres") return stuck ? "stuck" : "NOT stuck";
  return stuck ? "stuck = 1" : "stuck = 0";
}

/** A list's page: its table, row number and filters, and the caller's cursor and page size. */
const pageOf = (
  table: string,
  rowNo: string,
  where: KeysetQuery["where"],
  query: { cursor?: string | undefined; limit?: number | undefined },
): KeysetQuery => ({ table, rowNo, where, cursor: query.cursor, limit: query.limit });

export const effectsPage = (query: EffectQuery): KeysetQuery =>
  pageOf(
    "outbox",
    "effect_no",
    [equals("status", query.status), equals("provider", query.provider), equals("job_id", query.jobId)],
    query,
  );

export const parkedPage = (query: ParkedQuery): KeysetQuery =>
  pageOf("parked", "parked_no", [equals("provider", query.provider), equals("job_id", query.id)], query);

export const runsPage = (query: RunQuery): KeysetQuery =>
  pageOf("runs", "run_no", [equals("status", query.status), equals("kind", query.kind)], query);
