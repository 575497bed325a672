import type Database from "better-sqlite3";
import { loadMigrations } from "../migrations.js";

/**
 * Applies the SQLite migrations not yet applied, each in its own IMMEDIATE transaction so that
 * two processes opening the same file at once apply each migration exactly once.
 * Returns the versions applied by this call.
 */
export function migrateSqlite(db: Database.Database): number[] {
  db.exec(
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)",
  );
  const applied: number[] = [];
  const isApplied = db.prepare("SELECT 1 FROM schema_migrations WHERE version = ?");
  const record = db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)");
  for (const migration of loadMigrations("sqlite")) {
    const apply = db.transaction(() => {
      if (isApplied.get(migration.version)) return false;
      db.exec(migration.sql);
      record.run(migration.version, migration.name, Date.now());
      return true;
    });
    if (apply.immediate()) applied.push(migration.version);
  }
  return applied;
}

export function pendingSqliteMigrations(db: Database.Database): number {
  const done = new Set(
    (db.prepare("SELECT version FROM schema_migrations").all() as { version: number }[]).map(
      (r) => r.version,
    ),
  );
  return loadMigrations("sqlite").filter((m) => !done.has(m.version)).length;
}
