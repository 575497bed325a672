import type { AttachedBy, Intent } from "../../core/intent-model.js";
import type { IntentQuery, IntentReads, IntentStoreTx } from "../intent-store.js";
import { clampLimit } from "../json-column.js";
import type { TxSql } from "./postgres-client.js";
import type { Query } from "./postgres-lifecycle.js";
import { fromTime, jsonValue, toTime } from "./postgres-rows.js";

type Read = <T>(what: string, text: string, values?: readonly unknown[]) => Promise<T[] & { count: number }>;
/** A bound parameter: node-postgres sends each as text (JSON is cast with `::text::jsonb`). */
type Value = unknown;

interface IntentRow {
  key: string;
  provider: string;
  kind: string | null;
  metadata: unknown;
  idempotency_key: string;
  created_at: Date;
  deadline_at: Date;
  job_id: string | null;
  attached_at: Date | null;
  attached_by: string | null;
  orphaned_at: Date | null;
}

const intentFromRow = (row: IntentRow): Intent => ({
  key: row.key,
  provider: row.provider,
  kind: row.kind,
  metadata: row.metadata ?? null,
  idempotencyKey: row.idempotency_key,
  createdAt: fromTime(row.created_at),
  deadlineAt: fromTime(row.deadline_at),
  jobId: row.job_id,
  attachedAt: fromTime(row.attached_at),
  attachedBy: row.attached_by as AttachedBy | null,
  orphanedAt: fromTime(row.orphaned_at),
});

const STATUS_WHERE = {
  open: "job_id IS NULL AND orphaned_at IS NULL",
  orphaned: "job_id IS NULL AND orphaned_at IS NOT NULL",
  attached: "job_id IS NOT NULL",
} as const;

const SQL = {
  // Locked: an attach and the orphan scan of one intent queue here under READ COMMITTED.
  get: "SELECT * FROM intents WHERE key = $1 FOR UPDATE",
  insert: `INSERT INTO intents (key, provider, kind, metadata, idempotency_key, created_at, deadline_at,
      job_id, attached_at, attached_by, orphaned_at)
    VALUES ($1, $2, $3, $4::text::jsonb, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT DO NOTHING`,
  update: `UPDATE intents SET kind = $2, metadata = $3::text::jsonb, job_id = $4, attached_at = $5,
      attached_by = $6, orphaned_at = $7
    WHERE key = $1 AND job_id IS NOT DISTINCT FROM $8 AND orphaned_at IS NOT DISTINCT FROM $9::timestamptz`,
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
      const [row] = await run<IntentRow>(SQL.get, [key]);
      return row ? intentFromRow(row) : null;
    },
    async insertIntent(i) {
      const values = [
        i.key,
        i.provider,
        i.kind,
        jsonValue(i.metadata),
        i.idempotencyKey,
        toTime(i.createdAt),
        toTime(i.deadlineAt),
        i.jobId,
        toTime(i.attachedAt),
        i.attachedBy,
        toTime(i.orphanedAt),
      ];
      return (await run(SQL.insert, values)).count === 1;
    },
    async updateIntent(i, expected) {
      const values = [
        i.key,
        i.kind,
        jsonValue(i.metadata),
        i.jobId,
        toTime(i.attachedAt),
        i.attachedBy,
        toTime(i.orphanedAt),
        expected.jobId,
        toTime(expected.orphanedAt),
      ];
      return (await run(SQL.update, values)).count === 1;
    },
    async intentForJob(provider, jobId) {
      const [row] = await run<IntentRow>(SQL.forJob, [provider, jobId]);
      return row ? intentFromRow(row) : null;
    },
    async overdueIntents(now, limit) {
      return (await run<IntentRow>(SQL.overdue, [toTime(now), limit])).map(intentFromRow);
    },
    async setDiscoveryCursor(provider, resume, now) {
      await run(SQL.setCursor, [provider, resume, toTime(now)]);
    },
  };
}

export function createPostgresIntentReads(read: Read): IntentReads {
  return {
    async getIntent(key) {
      const [row] = await read<IntentRow>("getIntent", "SELECT * FROM intents WHERE key = $1", [key]);
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
      return (await read<IntentRow>("listIntents", text, values)).map(intentFromRow);
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
