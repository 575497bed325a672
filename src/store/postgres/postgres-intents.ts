import type { IntentQuery, IntentReads, IntentStoreTx } from "../intent-store.js";
import { clampLimit } from "../json-column.js";
import { INTENTS, type Row } from "../tables.js";
import type { TxSql } from "./postgres-client.js";
import type { Query } from "./postgres-lifecycle.js";
import { toTime } from "./postgres-rows.js";

type Read = <T>(what: string, text: string, values?: readonly unknown[]) => Promise<T[] & { count: number }>;
/** A bound parameter: node-postgres sends each as text (JSON is cast with `::text::jsonb`). */
type Value = unknown;

/** The row → Intent function compiled from the mapping in tables.ts. */
const intentFromRow = INTENTS.postgres.fromRow;

const STATUS_WHERE = {
  open: "job_id IS NULL AND orphaned_at IS NULL",
  orphaned: "job_id IS NULL AND orphaned_at IS NOT NULL",
  attached: "job_id IS NOT NULL",
} as const;

const EXPECTED_AT = INTENTS.postgres.columns.length + 1;

const SQL = {
  // Locked: an attach and the orphan scan of one intent queue here under READ COMMITTED.
  get: "SELECT * FROM intents WHERE key = $1 FOR UPDATE",
  insert: `INSERT INTO intents ${INTENTS.postgres.insert} ON CONFLICT DO NOTHING`,
  // The expected job id and orphan time follow the columns: compare-and-set on what attaches.
  update: `UPDATE intents SET ${INTENTS.postgres.assignments}
    WHERE key = $1 AND job_id IS NOT DISTINCT FROM $${EXPECTED_AT}
      AND orphaned_at IS NOT DISTINCT FROM $${EXPECTED_AT + 1}::timestamptz`,
  forJob: "SELECT * FROM intents WHERE provider = $1 AND job_id = $2",
  // SKIP LOCKED: two replicas' scans flag different intents instead of queueing on the same ones.
  overdue: `SELECT * FROM intents WHERE job_id IS NULL AND orphaned_at IS NULL AND deadline_at <= $1
    ORDER BY deadline_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
  setCursor: `INSERT INTO discovery_cursors (provider, resume, updated_at) VALUES ($1, $2, $3)
    ON CONFLICT (provider) DO UPDATE SET resume = excluded.resume, updated_at = excluded.updated_at`,
} as const;

export function createPostgresIntentTx(tx: TxSql): IntentStoreTx {
  const run: Query = (text, values = []) => tx.unsafe(text, values as Value[], { prepare: true }) as never;
  return {
    async getIntent(key) {
      const [row] = await run<Row>(SQL.get, [key]);
      return row ? intentFromRow(row) : null;
    },
    async insertIntent(intent) {
      return (await run(SQL.insert, INTENTS.postgres.values(intent))).count === 1;
    },
    async updateIntent(intent, expected) {
      const values = [...INTENTS.postgres.values(intent), expected.jobId, toTime(expected.orphanedAt)];
      return (await run(SQL.update, values)).count === 1;
    },
    async intentForJob(provider, jobId) {
      const [row] = await run<Row>(SQL.forJob, [provider, jobId]);
      return row ? intentFromRow(row) : null;
    },
    async overdueIntents(now, limit) {
      return (await run<Row>(SQL.overdue, [toTime(now), limit])).map(intentFromRow);
    },
    async setDiscoveryCursor(provider, resume, now) {
      await run(SQL.setCursor, [provider, resume, toTime(now)]);
    },
  };
}

export function createPostgresIntentReads(read: Read): IntentReads {
  return {
    async getIntent(key) {
      const [row] = await read<Row>("getIntent", "SELECT * FROM intents WHERE key = $1", [key]);
      return row ? intentFromRow(row) : null;
    },
    async listIntents(query: IntentQuery) {
      const where: string[] = [];
      const values: unknown[] = [];
      if (query.status !== undefined) where.push(STATUS_WHERE[query.status]);
      if (query.provider !== undefined) {
        values.push(query.provider);
        where.push(`provider = $${values.length}`);
      }
      values.push(clampLimit(query.limit));
      const text = `SELECT * FROM intents ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
        ORDER BY created_at DESC, key LIMIT $${values.length}`;
      return (await read<Row>("listIntents", text, values)).map(intentFromRow);
    },
    async countOrphanedIntents() {
      const text = `SELECT count(*)::int AS n FROM intents WHERE ${STATUS_WHERE.orphaned}`;
      const [row] = await read<{ n: number }>("countOrphanedIntents", text);
      return row?.n ?? 0;
    },
    async getDiscoveryCursor(provider) {
      const text = "SELECT resume FROM discovery_cursors WHERE provider = $1";
      const [row] = await read<{ resume: string | null }>("getDiscoveryCursor", text, [provider]);
      return row?.resume ?? null;
    },
  };
}
