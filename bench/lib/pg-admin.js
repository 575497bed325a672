import pg from "pg";

/**
 * A bench's admin connection (it drops the bench's schemas), on node-postgres like the store and
 * the tests. A pool of one rather than a bare pg.Client: a bench runs for minutes and the server
 * may close an idle connection meanwhile; the pool opens another at the next query. The "error"
 * listener keeps such a close from ending the process (an EventEmitter "error" without one throws).
 *
 * Resolves once PostgreSQL answered `SELECT 1`; rejects (pool closed) when nothing answers at `url`
 * within `connectTimeoutMs`.
 */
export async function openAdmin(url, { connectTimeoutMs = 5000 } = {}) {
  const admin = new pg.Pool({ connectionString: url, max: 1, connectionTimeoutMillis: connectTimeoutMs });
  admin.on("error", () => {});
  try {
    await admin.query("SELECT 1");
    return admin;
  } catch (error) {
    await admin.end().catch(() => {});
    throw error;
  }
}
