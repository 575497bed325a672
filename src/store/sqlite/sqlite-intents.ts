import type { AttachedBy, Intent } from "../../core/intent-model.js";
import type { IntentQuery, IntentReads, IntentStoreTx } from "../intent-store.js";
import { clampLimit, fromJsonColumn, toJsonColumn } from "../json-column.js";
import type { SqliteDb } from "./sqlite-driver.js";

interface IntentRow {
  key: string;
  provider: string;
  kind: string | null;
  metadata: string | null;
  idempotency_key: string;
  created_at: number;
  deadline_at: number;
  job_id: string | null;
  attached_at: number | null;
  attached_by: string | null;
  orphaned_at: number | null;
}

const intentFromRow = (row: IntentRow): Intent => ({
  key: row.key,
  provider: row.provider,
  kind: row.kind,
  metadata: fromJsonColumn(row.metadata),
  idempotencyKey: row.idempotency_key,
  createdAt: row.created_at,
  deadlineAt: row.deadline_at,
  jobId: row.job_id,
  attachedAt: row.attached_at,
  attachedBy: row.attached_by as AttachedBy | null,
  orphanedAt: row.orphaned_at,
});

const GET = "SELECT * FROM intents WHERE key = ?";
const STATUS_WHERE = {
  open: "job_id IS NULL AND orphaned_at IS NULL",
  orphaned: "job_id IS NULL AND orphaned_at IS NOT NULL",
  attached: "job_id IS NOT NULL",
} as const;

/** Intents and discovery cursors inside one write transaction (single writer: no races). */
export function createSqliteIntentTx(db: SqliteDb): IntentStoreTx {
  const s = {
    get: db.prepare(GET),
    insert: db.prepare(
      `INSERT INTO intents (key, provider, kind, metadata, idempotency_key, created_at, deadline_at,
         job_id, attached_at, attached_by, orphaned_at)
       VALUES (@key, @provider, @kind, @metadata, @idempotency_key, @created_at, @deadline_at,
         @job_id, @attached_at, @attached_by, @orphaned_at)
       ON CONFLICT DO NOTHING`,
    ),
    update: db.prepare(
      `UPDATE intents SET kind = @kind, metadata = @metadata, job_id = @job_id, attached_at = @attached_at,
         attached_by = @attached_by, orphaned_at = @orphaned_at
       WHERE key = @key AND job_id IS @expected_job_id AND orphaned_at IS @expected_orphaned_at`,
    ),
    forJob: db.prepare("SELECT * FROM intents WHERE provider = ? AND job_id = ?"),
    overdue: db.prepare(
      `SELECT * FROM intents WHERE job_id IS NULL AND orphaned_at IS NULL AND deadline_at <= ?
       ORDER BY deadline_at LIMIT ?`,
    ),
    setCursor: db.prepare(
      `INSERT INTO discovery_cursors (provider, resume, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (provider) DO UPDATE SET resume = excluded.resume, updated_at = excluded.updated_at`,
    ),
  };
  const params = (intent: Intent) => ({
    key: intent.key,
    provider: intent.provider,
    kind: intent.kind,
    metadata: toJsonColumn(intent.metadata),
    idempotency_key: intent.idempotencyKey,
    created_at: intent.createdAt,
    deadline_at: intent.deadlineAt,
    job_id: intent.jobId,
    attached_at: intent.attachedAt,
    attached_by: intent.attachedBy,
    orphaned_at: intent.orphanedAt,
  });
  return {
    async getIntent(key) {
      const row = s.get.get(key) as IntentRow | undefined;
      return row ? intentFromRow(row) : null;
    },
    async insertIntent(intent) {
      return s.insert.run(params(intent)).changes === 1;
    },
    async updateIntent(intent, expected) {
      const changes = s.update.run({
        ...params(intent),
        expected_job_id: expected.jobId,
        expected_orphaned_at: expected.orphanedAt,
      }).changes;
      return changes === 1;
    },
    async intentForJob(provider, jobId) {
      const row = s.forJob.get(provider, jobId) as IntentRow | undefined;
      return row ? intentFromRow(row) : null;
    },
    async overdueIntents(now, limit) {
      return (s.overdue.all(now, limit) as IntentRow[]).map(intentFromRow);
    },
    async setDiscoveryCursor(provider, resume, now) {
      s.setCursor.run(provider, resume, now);
    },
  };
}

export function createSqliteIntentReads(reader: SqliteDb, assertOpen: () => void): IntentReads {
  const get = reader.prepare(GET);
  const cursor = reader.prepare("SELECT resume FROM discovery_cursors WHERE provider = ?");
  const orphaned = reader.prepare(`SELECT count(*) AS n FROM intents WHERE ${STATUS_WHERE.orphaned}`);
  return {
    async getIntent(key) {
      assertOpen();
      const row = get.get(key) as IntentRow | undefined;
      return row ? intentFromRow(row) : null;
    },
    async listIntents(query: IntentQuery) {
      assertOpen();
      const where: string[] = [];
      const params: unknown[] = [];
      if (query.status !== undefined) where.push(STATUS_WHERE[query.status]);
      if (query.provider !== undefined) where.push("provider = ?") && params.push(query.provider);
      const sql = `SELECT * FROM intents ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
        ORDER BY created_at DESC, key LIMIT ?`;
      const rows = reader.prepare(sql).all(...params, clampLimit(query.limit)) as IntentRow[];
      return rows.map(intentFromRow);
    },
    async countOrphanedIntents() {
      assertOpen();
      return (orphaned.get() as { n: number }).n;
    },
    async getDiscoveryCursor(provider) {
      assertOpen();
      const row = cursor.get(provider) as { resume: string | null } | undefined;
      return row?.resume ?? null;
    },
  };
}
