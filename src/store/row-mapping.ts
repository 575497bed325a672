import { fromJsonColumn, toJsonColumn } from "./json-column.js";
import { fromTime, jsonValue, toTime } from "./postgres/postgres-values.js";

/**
 * Declarative row mapping: one line per column (field, column, codec) and, compiled from it once
 * at module load, the column list, the parameters (SQLite: named; PostgreSQL: an array in
 * column-list order, so position binding cannot drift) and the row → object function of each
 * dialect. The Durable Object store speaks the SQLite dialect.
 */

/** How one column's value travels: the port's value ↔ what each driver binds and returns. */
export interface Codec {
  /** `text`, `int`, ...: what the schema test checks the column's declared type against. */
  readonly name: CodecName;
  readonly sqlite: Conversion;
  readonly postgres: Conversion;
}

export type CodecName = "text" | "int" | "real" | "bool" | "json" | "time";

/** null for "the value as it is": no call per row for the columns that need no conversion. */
interface Conversion {
  readonly toDb: ((value: never) => unknown) | null;
  readonly fromDb: ((value: never) => unknown) | null;
}

const same: Conversion = { toDb: null, fromDb: null };

export const codecs: Record<CodecName, Codec> = {
  text: { name: "text", sqlite: same, postgres: same },
  int: { name: "int", sqlite: same, postgres: same },
  /** Double precision: the provider's ordering key (max_update_time). */
  real: { name: "real", sqlite: same, postgres: same },
  /** SQLite has no boolean: 1 and 0. */
  bool: {
    name: "bool",
    sqlite: { toDb: (value: boolean) => (value ? 1 : 0), fromDb: (value: number) => value === 1 },
    postgres: same,
  },
  /** SQLite: JSON text. PostgreSQL: jsonb, sent as text the statement casts, read back parsed. */
  json: {
    name: "json",
    sqlite: { toDb: toJsonColumn, fromDb: fromJsonColumn },
    postgres: { toDb: jsonValue, fromDb: (value: unknown) => value ?? null },
  },
  /** The port's epoch milliseconds. SQLite: INTEGER. PostgreSQL: timestamptz, a `Date` in postgres.js. */
  time: {
    name: "time",
    sqlite: same,
    postgres: {
      toDb: toTime,
      fromDb: fromTime,
    },
  },
};

export interface ColumnSpec {
  readonly column: string;
  readonly codec: Codec;
  readonly nullable: boolean;
  /** Set once at insert: left out of an UPDATE's SET on SQLite, which rewrites every index over a SET column. */
  readonly fixed: boolean;
}

/** A mapping line's column half: `col("max_seq", "int").orNull()`, `col("id", "text").setOnce()`. */
class Column implements ColumnSpec {
  constructor(
    readonly column: string,
    readonly codec: Codec,
    readonly nullable = false,
    readonly fixed = false,
  ) {}
  orNull(): Column {
    return new Column(this.column, this.codec, true, this.fixed);
  }
  setOnce(): Column {
    return new Column(this.column, this.codec, this.nullable, true);
  }
}

export function col(column: string, codec: CodecName): Column {
  return new Column(column, codecs[codec]);
}

/** A column only the database writes (the row number): read, never bound. */
export interface GeneratedColumn<N> {
  readonly column: string;
  /** The object field it fills, if the port exposes it (an event's seqNo). */
  readonly field?: N;
}

/** `T` is what a row reads as; `N` the field (if any) the row number fills, which is never bound. */
export interface TableSpec<T, N extends keyof T = never> {
  readonly table: string;
  /** The row number (INTEGER PRIMARY KEY / identity): cursors page by it. */
  readonly rowNumber: GeneratedColumn<N>;
  /** Every bound field, in column-list order: a field `T` lacks, or one left out, does not compile. */
  readonly columns: { readonly [K in Exclude<keyof T, N>]-?: ColumnSpec };
}

interface Line {
  readonly field: string;
  readonly column: string;
  readonly toDb: ((value: unknown) => unknown) | null;
  readonly fromDb: ((value: unknown) => unknown) | null;
}

export interface DialectMapping<T, Row> {
  /** Column names in binding order. */
  readonly columns: readonly string[];
  /** Row → port object. */
  readonly fromRow: (row: Row) => T;
}

export interface SqliteMapping<T, B> extends DialectMapping<T, Record<string, unknown>> {
  /** `(a, b) VALUES (@a, @b)` for an INSERT. */
  readonly insert: string;
  /** `a = @a, ...` over the columns an UPDATE may change (all but the set-once ones). */
  readonly assignments: string;
  /** Named parameters (`@column`), one per column. */
  readonly params: (value: B) => Record<string, unknown>;
}

export interface PostgresMapping<T, B> extends DialectMapping<T, Record<string, unknown>> {
  /** Values in `columns` order: `$1` is columns[0]. */
  readonly values: (value: B) => unknown[];
  /** `(a, b) VALUES ($1, $2::text::jsonb)` for an INSERT (jsonb travels as text, see jsonValue). */
  readonly insert: string;
  /** `a = $1, b = $2, ...` over every column, for an UPDATE. */
  readonly assignments: string;
}

export interface TableMapping<T, N extends keyof T = never> {
  readonly spec: TableSpec<T, N>;
  readonly sqlite: SqliteMapping<T, Omit<T, N>>;
  readonly postgres: PostgresMapping<T, Omit<T, N>>;
}

/** Compiles a table's mapping lines for both dialects. Run once per table, at module load. */
export function defineTable<T, N extends keyof T = never>(spec: TableSpec<T, N>): TableMapping<T, N> {
  const entries = Object.entries(spec.columns) as [string, ColumnSpec][];
  const lines = (dialect: "sqlite" | "postgres"): Line[] =>
    entries.map(([field, c]) => ({
      field,
      column: c.column,
      toDb: c.codec[dialect].toDb as Line["toDb"],
      fromDb: c.codec[dialect].fromDb as Line["fromDb"],
    }));
  const columns = entries.map(([, c]) => c.column);
  const param = (c: ColumnSpec, i: number) => (c.codec.name === "json" ? `$${i}::text::jsonb` : `$${i}`);
  const pg = lines("postgres");
  const lite = lines("sqlite");
  return {
    spec,
    sqlite: {
      columns,
      insert: `(${columns.join(", ")}) VALUES (${columns.map((c) => `@${c}`).join(", ")})`,
      assignments: entries
        .filter(([, c]) => !c.fixed)
        .map(([, c]) => `${c.column} = @${c.column}`)
        .join(", "),
      fromRow: reader<T>(lite, spec.rowNumber),
      params(value) {
        const out: Record<string, unknown> = {};
        const source = value as Record<string, unknown>;
        for (const line of lite) {
          const v = source[line.field];
          out[line.column] = line.toDb === null ? v : line.toDb(v);
        }
        return out;
      },
    },
    postgres: {
      columns,
      fromRow: reader<T>(pg, spec.rowNumber),
      values(value) {
        const source = value as Record<string, unknown>;
        const out = new Array<unknown>(pg.length);
        for (let i = 0; i < pg.length; i++) {
          const line = pg[i] as Line;
          const v = source[line.field];
          out[i] = line.toDb === null ? v : line.toDb(v);
        }
        return out;
      },
      insert: `(${columns.join(", ")}) VALUES (${entries.map(([, c], i) => param(c, i + 1)).join(", ")})`,
      assignments: entries.map(([, c], i) => `${c.column} = ${param(c, i + 1)}`).join(", "),
    },
  };
}

function reader<T>(
  lines: readonly Line[],
  rowNumber: GeneratedColumn<PropertyKey>,
): (row: Record<string, unknown>) => T {
  const numbered = rowNumber.field as string | undefined;
  return (row) => {
    const out: Record<string, unknown> = {};
    if (numbered !== undefined) out[numbered] = row[rowNumber.column];
    for (const line of lines) {
      const v = row[line.column];
      out[line.field] = line.fromDb === null ? v : line.fromDb(v);
    }
    return out as T;
  };
}
