import Database from "better-sqlite3";
import type { Sql } from "../../../src/store/postgres/postgres-client.js";
import { migrateSqlite } from "../../../src/store/sqlite/sqlite-migrate.js";

/**
 * The schema the migrations build, as text that changes exactly when the schema does: committed
 * next to this file (sqlite.sql, postgres.txt) and compared by schema-drift.test.ts.
 */

/** Every table, index, trigger and view SQLite keeps for a freshly migrated database, as SQL. */
export function sqliteSchemaDump(): string {
  const db = new Database(":memory:");
  try {
    migrateSqlite(db);
    return sqliteMasterDump(db);
  } finally {
    db.close();
  }
}

const SQLITE_KIND_ORDER =
  "CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 WHEN 'trigger' THEN 2 ELSE 3 END";

function sqliteMasterDump(db: Database.Database): string {
  // sqlite_master keeps each object's CREATE text (rewritten by ALTER TABLE); the dump runs as it is.
  const objects = db
    .prepare(
      `SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%'
       ORDER BY ${SQLITE_KIND_ORDER}, tbl_name, name`,
    )
    .pluck()
    .all() as string[];
  return `${objects.map((sql) => `${sql};`).join("\n\n")}\n`;
}

/** A table's columns as SQLite declares them (name, declared type, NOT NULL, primary key). */
export function sqliteColumns(dump: string): Map<string, DeclaredColumn[]> {
  const db = new Database(":memory:");
  try {
    db.exec(dump);
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
      .pluck()
      .all() as string[];
    const out = new Map<string, DeclaredColumn[]>();
    for (const table of tables) {
      const info = db.pragma(`table_info(${table})`) as {
        name: string;
        type: string;
        notnull: number;
        pk: number;
      }[];
      out.set(
        table,
        info.map((c) => ({ name: c.name, type: c.type, nullable: c.notnull === 0 && c.pk === 0 })),
      );
    }
    return out;
  } finally {
    db.close();
  }
}

export interface DeclaredColumn {
  name: string;
  type: string;
  nullable: boolean;
}

/**
 * The catalog's view of one PostgreSQL schema: tables (with storage options), columns,
 * constraints, indexes, triggers and functions, one line each, the schema's name replaced by
 * `:schema` so that any throwaway schema dumps the same.
 */
export async function postgresSchemaDump(sql: Sql, schema: string): Promise<string> {
  const lines: string[] = [];
  const tables = await sql.unsafe<{ relname: string; reloptions: string[] | null }>(
    `
    SELECT c.relname, c.reloptions FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') ORDER BY c.relname`,
    [schema],
  );
  for (const table of tables) {
    lines.push(
      `table ${table.relname}${table.reloptions ? ` (${[...table.reloptions].sort().join(", ")})` : ""}`,
    );
    const columns = await sql.unsafe<{
      column_name: string;
      data_type: string;
      is_nullable: string;
      column_default: string | null;
      identity_generation: string | null;
    }>(
      `
      SELECT column_name, data_type, is_nullable, column_default, identity_generation
      FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2
      ORDER BY ordinal_position`,
      [schema, table.relname],
    );
    for (const c of columns) {
      const parts = [c.column_name, c.data_type, c.is_nullable === "YES" ? "NULL" : "NOT NULL"];
      if (c.column_default !== null) parts.push(`default ${c.column_default}`);
      if (c.identity_generation !== null) parts.push(`identity ${c.identity_generation}`);
      lines.push(`  column ${parts.join(" | ")}`);
    }
    const constraints = await sql.unsafe<{ conname: string; def: string }>(
      `
      SELECT con.conname, pg_get_constraintdef(con.oid) AS def FROM pg_constraint con
      JOIN pg_class c ON c.oid = con.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relname = $2 ORDER BY con.conname`,
      [schema, table.relname],
    );
    for (const c of constraints) lines.push(`  constraint ${c.conname} ${c.def}`);
    const indexes = await sql.unsafe<{ indexname: string; indexdef: string }>(
      `
      SELECT indexname, indexdef FROM pg_indexes
      WHERE schemaname = $1 AND tablename = $2 ORDER BY indexname`,
      [schema, table.relname],
    );
    for (const i of indexes) lines.push(`  index ${i.indexdef}`);
    const triggers = await sql.unsafe<{ def: string }>(
      `
      SELECT pg_get_triggerdef(t.oid) AS def FROM pg_trigger t
      JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relname = $2 AND NOT t.tgisinternal ORDER BY t.tgname`,
      [schema, table.relname],
    );
    for (const t of triggers) lines.push(`  trigger ${t.def}`);
  }
  const functions = await sql.unsafe<{ def: string }>(
    `
    SELECT pg_get_functiondef(p.oid) AS def FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE n.nspname = $1 ORDER BY p.proname, p.oid`,
    [schema],
  );
  for (const f of functions) lines.push(`function ${f.def.trim()}`);
  return `${lines.join("\n").replaceAll(`${schema}.`, ":schema.").replaceAll(`"${schema}".`, ":schema.")}\n`;
}

/** The `column` lines of a PostgreSQL dump, by table. */
export function postgresColumns(dump: string): Map<string, DeclaredColumn[]> {
  const out = new Map<string, DeclaredColumn[]>();
  let table: DeclaredColumn[] = [];
  for (const line of dump.split("\n")) {
    const opened = /^table (\S+)/.exec(line);
    if (opened) {
      table = [];
      out.set(opened[1] as string, table);
    }
    const column = /^ {2}column (.*)$/.exec(line);
    if (column) {
      const [name, type, nullable] = (column[1] as string).split(" | ");
      table.push({ name: name as string, type: type as string, nullable: nullable === "NULL" });
    }
  }
  return out;
}
