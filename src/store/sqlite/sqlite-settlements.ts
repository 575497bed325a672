import {
  createSettlementSignal,
  type SettlementReads,
  type SettlementRow,
  settlementFromRow,
  settlementPageSql,
} from "../settlement-feed.js";
import type { SqliteDb } from "./sqlite-driver.js";
import { type JobRow, jobFromRow } from "./sqlite-rows.js";

/** Another process writing the same file is seen this often while someone waits. */
const POLL_MS = 1000;

/**
 * The settlement feed on SQLite (migration 0008). `committed` is called after every committed
 * transaction of this store: the waiters learn of a new settlement from a look at the newest
 * row number, taken only while someone waits.
 */
export function createSqliteSettlements(reader: SqliteDb, assertOpen: () => void, pollMs = POLL_MS) {
  const newest = reader.prepare("SELECT coalesce(max(settlement_no), 0) FROM settlements").pluck();
  const job = reader.prepare("SELECT * FROM jobs WHERE provider = ? AND id = ?");
  const signal = createSettlementSignal(() => newest.get() as number, pollMs);

  const reads: SettlementReads = {
    async readSettlements(query) {
      assertOpen();
      const { sql, values } = settlementPageSql(query, () => "?");
      const rows = reader
        .prepare(`SELECT * FROM settlements ${sql}`)
        .all(...values) as SettlementRow<number>[];
      const items = rows.map((row) => {
        const current = job.get(row.provider, row.job_id) as JobRow | undefined;
        return settlementFromRow(row, row.settled_at, current ? jobFromRow(current) : null);
      });
      return { items, cursor: items.at(-1)?.cursor ?? query.after ?? null };
    },
    settlementCommitted: (abort?: AbortSignal) => signal.wait(abort),
  };
  return { reads, committed: () => signal.poke(), close: () => signal.close() };
}
