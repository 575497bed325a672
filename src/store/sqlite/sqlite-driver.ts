/**
 * The part of a synchronous SQLite connection the SQLite store uses: better-sqlite3's shape, so a
 * better-sqlite3 `Database` is one as it is. A Durable Object's `ctx.storage.sql` is adapted to it
 * in src/workers/durable-object-sql.ts; the store's SQL is then the same on both.
 */
export interface SqliteDb {
  prepare(sql: string): SqliteStatement;
  exec(sql: string): unknown;
  pragma(source: string, options?: { simple?: boolean }): unknown;
}

/** Parameters are positional (`?`) or one object for `@name` placeholders. */
export interface SqliteStatement {
  /** True when the statement returns rows. */
  readonly reader: boolean;
  run(...params: unknown[]): { changes: number };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  /** Rows as their first column's value. */
  pluck(toggle?: boolean): SqliteStatement;
  /** Rows as arrays of column values. */
  raw(toggle?: boolean): SqliteStatement;
}
