import type { SqliteDb, SqliteStatement } from "../store/sqlite/sqlite-driver.js";
import type { SqlStorage } from "./cloudflare-types.js";

type Shape = "rows" | "pluck" | "raw";

/**
 * A Durable Object's `ctx.storage.sql` in better-sqlite3's shape, so the SQLite store runs on it
 * unchanged. The differences it bridges: `exec` binds `?` only (named `@params` are rewritten to
 * positions once per statement), reports no per-statement change count (`rowsWritten` counts index
 * writes too, so `changes()` is asked), and refuses PRAGMAs that touch the file.
 */
export function durableObjectSqlite(sql: SqlStorage): SqliteDb {
  return {
    prepare: (source) => statement(sql, compile(source), "rows"),
    exec(source) {
      sql.exec(source).toArray();
    },
    pragma(source, options) {
      const rows = sql.exec(`PRAGMA ${source}`).toArray();
      return options?.simple ? Object.values(rows[0] ?? {})[0] : rows;
    },
  };
}

interface Compiled {
  text: string;
  /** Names of the `@params` in order of appearance; null for positional statements. */
  names: string[] | null;
  reader: boolean;
}

function compile(source: string): Compiled {
  const names: string[] = [];
  const text = source.replace(/@([A-Za-z_][A-Za-z0-9_]*)/g, (_, name: string) => {
    names.push(name);
    return "?";
  });
  return {
    text,
    names: names.length > 0 ? names : null,
    reader: /^\s*(select|with|values|pragma)\b/i.test(source) || /\breturning\b/i.test(source),
  };
}

function statement(sql: SqlStorage, compiled: Compiled, shape: Shape): SqliteStatement {
  const bindings = (params: unknown[]): unknown[] => {
    if (compiled.names === null) return params;
    const named = params[0] as Record<string, unknown>;
    return compiled.names.map((name) => named[name]);
  };
  const all = (params: unknown[]): unknown[] => {
    const cursor = sql.exec(compiled.text, ...bindings(params));
    if (shape === "rows") return cursor.toArray();
    const rows = [...cursor.raw()];
    return shape === "raw" ? rows : rows.map((row) => row[0]);
  };
  return {
    reader: compiled.reader,
    run(...params) {
      sql.exec(compiled.text, ...bindings(params)).toArray();
      return { changes: sql.exec("SELECT changes() AS n").toArray()[0]?.n as number };
    },
    get: (...params) => all(params)[0],
    all: (...params) => all(params),
    pluck: (toggle = true) => statement(sql, compiled, toggle ? "pluck" : "rows"),
    raw: (toggle = true) => statement(sql, compiled, toggle ? "raw" : "rows"),
  };
}
