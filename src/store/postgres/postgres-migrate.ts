import { loadMigrations } from "../migrations.js";
import type { Queryable, Sql } from "./postgres-client.js";

/**
 * Applies the PostgreSQL migrations not yet applied, in one transaction under a transaction-level
 * advisory lock keyed by the schema: replicas that start at the same moment queue on the lock,
 * and each finds the versions the first one recorded, so every migration is applied exactly once.
 * The schema itself is created under the same lock (CREATE SCHEMA IF NOT EXISTS alone races).
 * Returns the versions applied by this call.
 */
export async function migratePostgres(sql: Sql, schema: string | undefined): Promise<number[]> {
  const migrations = loadMigrations("postgres");
  // No client-side deadline either: waiting behind another replica's migration is not a silent server.
  return sql.begin(
    "",
    async (tx) => {
      // A migration may rewrite a large table, and a replica that starts beside another waits on the
      // lock below for as long as the other's migration takes: the pool's timeouts are for requests.
      await tx.unsafe("SET LOCAL statement_timeout = 0");
      await tx.unsafe("SET LOCAL lock_timeout = 0");
      const target =
        schema ?? (await tx.unsafe<{ name: string }>("SELECT current_schema() AS name"))[0]?.name;
      await tx.unsafe("SELECT pg_advisory_xact_lock(hashtext($1))", [
        `finality.migrate.${target ?? "public"}`,
      ]);
      if (schema !== undefined) await tx.unsafe(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      await tx.unsafe(
        `CREATE TABLE IF NOT EXISTS schema_migrations (
         version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      const rows = await tx.unsafe<{ version: number }>("SELECT version FROM schema_migrations");
      const done = new Set(rows.map((row) => row.version));
      const applied: number[] = [];
      for (const migration of migrations) {
        if (done.has(migration.version)) continue;
        // No parameters: sent with the simple protocol, so a file may hold many statements.
        await tx.unsafe(migration.sql);
        await tx.unsafe("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", [
          migration.version,
          migration.name,
        ]);
        applied.push(migration.version);
      }
      return applied;
    },
    { queryTimeoutMs: Number.POSITIVE_INFINITY },
  );
}

/** Whether migration `version` is applied (false when nothing is). */
export async function postgresMigrationApplied(sql: Queryable, version: number): Promise<boolean> {
  const [table] = await sql.unsafe<{ exists: boolean }>(
    "SELECT to_regclass('schema_migrations') IS NOT NULL AS exists",
  );
  if (!table?.exists) return false;
  const rows = await sql.unsafe<{ version: number }>(
    "SELECT version FROM schema_migrations WHERE version = $1",
    [version],
  );
  return rows.length === 1;
}

/** How many migrations are not applied yet (all of them when the table does not exist). */
export async function pendingPostgresMigrations(sql: Queryable): Promise<number> {
  const migrations = loadMigrations("postgres");
  const [table] = await sql.unsafe<{ exists: boolean }>(
    "SELECT to_regclass('schema_migrations') IS NOT NULL AS exists",
  );
  if (!table?.exists) return migrations.length;
  const rows = await sql.unsafe<{ version: number }>("SELECT version FROM schema_migrations");
  const done = new Set(rows.map((row) => row.version));
  return migrations.filter((migration) => !done.has(migration.version)).length;
}
