import type { TerminalState } from "../../core/states.js";
import { clampLimit } from "../json-column.js";
import {
  createSettlementSignal,
  MAX_SETTLEMENT_LIMIT,
  type Settlement,
  type SettlementPage,
  type SettlementQuery,
  type SettlementReads,
  settlementCursor,
  settlementNumber,
} from "../settlement-feed.js";
import type { SqliteDb } from "./sqlite-driver.js";
import { type JobRow, jobFromRow } from "./sqlite-rows.js";

interface SettlementRow {
  settlement_no: number;
  provider: string;
  job_id: string;
  kind: string | null;
  state: string;
  settled_at: number;
  settled_by: string | null;
}

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
  let known = -1;
  const signal = createSettlementSignal(() => {
    const now = newest.get() as number;
    const grew = now > known;
    known = now;
    return grew;
  }, pollMs);

  const reads: SettlementReads = {
    async readSettlements(query: SettlementQuery): Promise<SettlementPage> {
      assertOpen();
      const after = settlementNumber(query.after);
      const where = ["settlement_no > ?"];
      const params: unknown[] = [after];
      if (query.provider !== undefined) where.push("provider = ?") && params.push(query.provider);
      if (query.kind !== undefined) where.push("kind = ?") && params.push(query.kind);
      const limit = clampLimit(query.limit, 100, MAX_SETTLEMENT_LIMIT);
      const rows = reader
        .prepare(`SELECT * FROM settlements WHERE ${where.join(" AND ")} ORDER BY settlement_no LIMIT ?`)
        .all(...params, limit) as SettlementRow[];
      const items = rows.map((row): Settlement => {
        const current = job.get(row.provider, row.job_id) as JobRow | undefined;
        return {
          cursor: settlementCursor(row.settlement_no),
          provider: row.provider,
          id: row.job_id,
          kind: row.kind,
          state: row.state as TerminalState,
          settledAt: row.settled_at,
          settledBy: row.settled_by,
          job: current ? jobFromRow(current) : null,
        };
      });
      return { items, cursor: items.at(-1)?.cursor ?? query.after ?? null };
    },
    settlementCommitted: (abort?: AbortSignal) => signal.wait(abort),
  };
  return { reads, committed: () => signal.poke(), close: () => signal.close() };
}
