import type { IntentQuery, IntentReads, IntentStoreTx } from "../intent-store.js";
import { clampLimit } from "../json-column.js";
import { INTENTS, type Row } from "../tables.js";
import type { SqliteDb } from "./sqlite-driver.js";

/** The row → Intent function compiled from the mapping in tables.ts. */
const intentFromRow = INTENTS.sqlite.fromRow;

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
    insert: db.prepare(`INSERT INTO intents ${INTENTS.sqlite.insert} ON CONFLICT DO NOTHING`),
    // SET leaves the set-once columns alone; the expected job id and orphan time compare-and-set.
    update: db.prepare(
      `UPDATE intents SET ${INTENTS.sqlite.assignments}
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
  const params = INTENTS.sqlite.params;
  return {
    async getIntent(key) {
      const row = s.get.get(key) as Row | undefined;
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
      const row = s.forJob.get(provider, jobId) as Row | undefined;
      return row ? intentFromRow(row) : null;
    },
    async overdueIntents(now, limit) {
      return (s.overdue.all(now, limit) as Row[]).map(intentFromRow);
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
      const row = get.get(key) as Row | undefined;
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
      const rows = reader.prepare(sql).all(...params, clampLimit(query.limit)) as Row[];
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
