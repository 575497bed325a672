import { fromJsonColumn, toJsonColumn } from "./json-column.js";
import { fromTime, jsonValue, toTime } from "./postgres/postgres-values.js";

/**
 * Declarative row mapping: one line per column (field, column, codec) and, compiled from it once
 * at module load, the column list, the parameters (SQLite: named; PostgreSQL: an array in
 * column-list order, so position binding cannot drift) and the row → object function of each
 * dialect. The Durable Object store speaks the SQLite dialect.
 */

/** How one column's value travels: the port's value ↔ what each driver binds and returns. */
interface Codec {
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

const codecs: Record<CodecName, Codec> = {
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
  /** The port's epoch milliseconds. SQLite: INTEGER. PostgreSQL: timestamptz, a `Date` in node-postgres. */
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
interface GeneratedColumn<N> {
  readonly column: string;
  /** The object field it fills, if the port exposes it (an event's seqNo). */
  readonly field?: N;
}

/** `T` is what a row reads as; `N` the field (if any) the row number fills, which is never bound. */
interface TableSpec<T, N extends keyof T = never> {
  readonly table: string;
  /** The row number (INTEGER PRIMARY KEY / identity): cursors page by it. None for a table keyed otherwise (tombstones). */
  readonly rowNumber?: GeneratedColumn<N>;
  /** Every bound field, in column-list order: a field `T` lacks, or one left out, does not compile. */
  readonly columns: { readonly [K in Exclude<keyof T, N>]-?: ColumnSpec };
}

interface Line {
  readonly field: string;
  readonly column: string;
  readonly toDb: ((value: unknown) => unknown) | null;
  readonly fromDb: ((value: unknown) => unknown) | null;
}

interface DialectMapping<T, Row> {
  /** Column names in binding order. */
  readonly columns: readonly string[];
  /** Row → port object. */
  readonly fromRow: (row: Row) => T;
}

interface SqliteMapping<T, B> extends DialectMapping<T, Record<string, unknown>> {
  /** `(a, b) VALUES (@a, @b)` for an INSERT. */
  readonly insert: string;
  /** `a = @a, ...` over the columns an UPDATE may change (all but the set-once ones). */
  readonly assignments: string;
  /** Named parameters (`@column`), one per column. */
  readonly params: (value: B) => Record<string, unknown>;
  /**
   * The hot path's forms: `?` bound by position costs better-sqlite3 about a third of a named
   * parameter (no name lookup per column, no object to build). `(a, b) VALUES (?, ?)`, bound by
   * `values`; `a = ?, ...` over the columns an UPDATE may change, bound by `changes` (the WHERE's
   * own `?` follow).
   */
  readonly insertPositional: string;
  readonly values: (value: B) => unknown[];
  readonly assignmentsPositional: string;
  readonly changes: (value: B) => unknown[];
  /**
   * Writing only what moved: bit i set when the i-th of the `changes` columns differs between
   * `before` and `after` (`!==`: a JSON value is compared by reference, so a new object is
   * written, an untouched one is not re-encoded); the SET list of those columns
   * (`assignmentsFor`) and their values in its order (`maskedChanges`). SQLite rewrites every
   * index over a SET column and evaluates every `UPDATE OF` trigger on one, changed or not.
   */
  readonly changedMask: (before: B, after: B) => number;
  readonly assignmentsFor: (mask: number) => string;
  readonly maskedChanges: (value: B, mask: number) => unknown[];
  /**
   * `a, b, ...` to SELECT, read back by `fromValues` from a raw row (an array, better-sqlite3's
   * `raw()`): the driver builds no object keyed by column name for a row only read once.
   */
  readonly selectList: string;
  readonly fromValues: (row: readonly unknown[]) => T;
}

interface PostgresMapping<T, B> extends DialectMapping<T, Record<string, unknown>> {
  /** Values in `columns` order: `$1` is columns[0]. */
  readonly values: (value: B) => unknown[];
  /** `(a, b) VALUES ($1, $2::text::jsonb)` for an INSERT (jsonb travels as text, see jsonValue). */
  readonly insert: string;
  /** `$1, $2::text::jsonb`: the values alone, in `columns` order, for an `INSERT … SELECT`. */
  readonly valueList: string;
  /** `a = $1, b = $2, ...` over every column, for an UPDATE. */
  readonly assignments: string;
  /**
   * Writing only what moved, as on SQLite (its `changedMask`, over the columns an UPDATE may
   * change): every bound parameter costs node-postgres its conversion to text (a JSON value is
   * stringified) and its place in the Bind message. `assignmentsFor(mask, first)` numbers its
   * parameters from `$first`, bound by `maskedChanges` in the same order.
   */
  readonly changedMask: (before: B, after: B) => number;
  readonly assignmentsFor: (mask: number, first: number) => string;
  readonly maskedChanges: (value: B, mask: number) => unknown[];
  /**
   * A row as one value to SELECT: `json_build_array(row number?, a, b, ...)`, times as epoch ms,
   * read back by `fromArray` from the parsed array. node-postgres describes every column of each
   * answer and builds each row as an object keyed by column name, per column a cost several times
   * a JSON value's (bench/README.md, "PostgreSQL: one column per row read"); one json column is one.
   */
  readonly selectArray: string;
  /** The same of a row-typed value, `(r.job)`: `json_build_array((r.job).a, ...)`. */
  readonly selectArrayOf: (record: string) => string;
  readonly fromArray: (row: readonly unknown[]) => T;
}

export interface TableMapping<T, N extends keyof T = never> {
  readonly spec: TableSpec<T, N>;
  readonly sqlite: SqliteMapping<T, Omit<T, N>>;
  readonly postgres: PostgresMapping<T, Omit<T, N>>;
}

/**
 * Compiles a table's mapping lines for both dialects. Run once per table, at module load.
 *
 * Where the runtime allows code generation (Node), each function is generated from the lines:
 * an object literal with every field named, as fast as a hand-written mapper (a loop over the
 * lines reads and writes properties by computed name, about 20× slower per row). workerd forbids
 * code generation, so the Durable Object store gets that loop; `codegen: false` forces it (tests).
 */
export function defineTable<T, N extends keyof T = never>(
  spec: TableSpec<T, N>,
  options: { codegen?: boolean } = {},
): TableMapping<T, N> {
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
  const changing = entries.filter(([, c]) => !c.fixed);
  const changingLines = lite.filter((_line, i) => !(entries[i] as [string, ColumnSpec])[1].fixed);
  const changingPg = pg.filter((_line, i) => !(entries[i] as [string, ColumnSpec])[1].fixed);
  const build = options.codegen === false ? looped : generated;
  const arrayOf = (qualifier: string) =>
    `json_build_array(${[
      ...(spec.rowNumber?.field === undefined ? [] : [qualifier + spec.rowNumber.column]),
      ...entries.map(([, c]) =>
        c.codec.name === "time" ? epochMs(qualifier + c.column) : qualifier + c.column,
      ),
    ].join(", ")})`;
  // A bit per changing column must fit in a 32-bit integer.
  const maskable = changingLines.length <= 31;
  return {
    spec,
    sqlite: {
      columns,
      insert: `(${columns.join(", ")}) VALUES (${columns.map((c) => `@${c}`).join(", ")})`,
      assignments: changing.map(([, c]) => `${c.column} = @${c.column}`).join(", "),
      fromRow: build.reader(lite, spec.rowNumber),
      params: build.named(lite) as unknown as SqliteMapping<T, Omit<T, N>>["params"],
      insertPositional: `(${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`,
      values: build.positional(lite) as unknown as SqliteMapping<T, Omit<T, N>>["values"],
      assignmentsPositional: changing.map(([, c]) => `${c.column} = ?`).join(", "),
      changes: build.positional(changingLines) as unknown as SqliteMapping<T, Omit<T, N>>["changes"],
      changedMask: (maskable ? build.changedMask(changingLines) : () => -1) as unknown as SqliteMapping<
        T,
        Omit<T, N>
      >["changedMask"],
      assignmentsFor: (mask) =>
        changing
          .filter((_entry, i) => (mask & (1 << i)) !== 0)
          .map(([, c]) => `${c.column} = ?`)
          .join(", "),
      maskedChanges: build.masked(changingLines) as unknown as SqliteMapping<T, Omit<T, N>>["maskedChanges"],
      selectList: [...(spec.rowNumber?.field === undefined ? [] : [spec.rowNumber.column]), ...columns].join(
        ", ",
      ),
      fromValues: build.indexed(lite, spec.rowNumber) as unknown as SqliteMapping<
        T,
        Omit<T, N>
      >["fromValues"],
    },
    postgres: {
      columns,
      fromRow: build.reader(pg, spec.rowNumber),
      values: build.positional(pg) as unknown as PostgresMapping<T, Omit<T, N>>["values"],
      insert: `(${columns.join(", ")}) VALUES (${entries.map(([, c], i) => param(c, i + 1)).join(", ")})`,
      valueList: entries.map(([, c], i) => param(c, i + 1)).join(", "),
      assignments: entries.map(([, c], i) => `${c.column} = ${param(c, i + 1)}`).join(", "),
      changedMask: (maskable ? build.changedMask(changingPg) : () => -1) as unknown as PostgresMapping<
        T,
        Omit<T, N>
      >["changedMask"],
      assignmentsFor: (mask, first) =>
        changing
          .filter((_entry, i) => (mask & (1 << i)) !== 0)
          .map(([, c], i) => `${c.column} = ${param(c, first + i)}`)
          .join(", "),
      maskedChanges: build.masked(changingPg) as unknown as PostgresMapping<T, Omit<T, N>>["maskedChanges"],
      selectArray: arrayOf(""),
      selectArrayOf: (record) => arrayOf(`${record}.`),
      // In the array a time is already a number and JSON is parsed with it: nothing to convert.
      fromArray: build.indexed(
        pg.map((line) => ({ ...line, fromDb: null })),
        spec.rowNumber,
      ) as unknown as PostgresMapping<T, Omit<T, N>>["fromArray"],
    },
  };
}

/** Most distinct "columns that moved" statements kept per table; past it, every column is written. */
const MAX_PARTIAL_UPDATES = 64;

/**
 * The statement for each set of columns that moved (a `changedMask`), made on first use and kept:
 * a table's writes move a handful of column sets. Past MAX_PARTIAL_UPDATES sets it answers
 * undefined, and the caller writes every column.
 */
export function perChangedMask<S>(make: (mask: number) => S): (mask: number) => S | undefined {
  const made = new Map<number, S>();
  return (mask) => {
    let statement = made.get(mask);
    if (statement !== undefined || made.size >= MAX_PARTIAL_UPDATES) return statement;
    statement = make(mask);
    made.set(mask, statement);
    return statement;
  };
}

/**
 * A timestamptz column as epoch milliseconds in SQL. Every time is written in whole milliseconds
 * (toTime), so the rounding is exact whether extract answers numeric (PostgreSQL 14 on) or a double.
 */
const epochMs = (column: string) => `round(extract(epoch FROM ${column}) * 1000)`;

type Source = Record<string, unknown>;
type Reader = (row: Source) => never;

interface Builders {
  /** Row (columns) → object (fields), the row number first when the object carries it. */
  reader(lines: readonly Line[], rowNumber: GeneratedColumn<PropertyKey> | undefined): Reader;
  /** Object → `{ column: value }`. */
  named(lines: readonly Line[]): (value: Source) => Source;
  /** Object → `[value, ...]` in line order. */
  positional(lines: readonly Line[]): (value: Source) => unknown[];
  /** (before, after) → a bit per line whose field differs (`!==`). */
  changedMask(lines: readonly Line[]): (before: Source, after: Source) => number;
  /** (object, mask) → `[value, ...]` of the lines whose bit is set, in line order. */
  masked(lines: readonly Line[]): (value: Source, mask: number) => unknown[];
  /** `[row number?, value, ...]` (the select list's order) → object, like `reader`. */
  indexed(lines: readonly Line[], rowNumber: GeneratedColumn<PropertyKey> | undefined): Indexed;
}

type Indexed = (row: readonly unknown[]) => never;

const looped: Builders = {
  reader(lines, rowNumber) {
    const numbered = rowNumber?.field as string | undefined;
    return (row) => {
      const out: Source = {};
      if (numbered !== undefined) out[numbered] = row[rowNumber?.column as string];
      for (const line of lines) {
        const v = row[line.column];
        out[line.field] = line.fromDb === null ? v : line.fromDb(v);
      }
      return out as never;
    };
  },
  named: (lines) => (value) => {
    const out: Source = {};
    for (const line of lines) {
      const v = value[line.field];
      out[line.column] = line.toDb === null ? v : line.toDb(v);
    }
    return out;
  },
  positional: (lines) => (value) =>
    lines.map((line) => (line.toDb === null ? value[line.field] : line.toDb(value[line.field]))),
  changedMask: (lines) => (before, after) => {
    let mask = 0;
    lines.forEach((line, i) => {
      if (before[line.field] !== after[line.field]) mask |= 1 << i;
    });
    return mask;
  },
  masked: (lines) => (value, mask) => {
    const out: unknown[] = [];
    lines.forEach((line, i) => {
      if ((mask & (1 << i)) === 0) return;
      out.push(line.toDb === null ? value[line.field] : line.toDb(value[line.field]));
    });
    return out;
  },
  indexed(lines, rowNumber) {
    const numbered = rowNumber?.field as string | undefined;
    const first = numbered === undefined ? 0 : 1;
    return (row) => {
      const out: Source = {};
      if (numbered !== undefined) out[numbered] = row[0];
      lines.forEach((line, i) => {
        const v = row[first + i];
        out[line.field] = line.fromDb === null ? v : line.fromDb(v);
      });
      return out as never;
    };
  },
};

/** `c[i](v["name"])`, or `v["name"]` when the value goes as it is; names are quoted as JSON strings. */
function access(from: string, name: string, convert: number | null): string {
  const read = `${from}[${JSON.stringify(name)}]`;
  return convert === null ? read : `c[${convert}](${read})`;
}

type Expr = (line: Line, i: number, from: string) => string;
/** `r[3]`, or `c[i](r[3])`: a raw row's value by its position. */
type At = (i: number, position: number) => string;

/** Generated from the lines' own names (constants of this package, quoted): no input reaches the source. */
function generate<F>(
  lines: readonly Line[],
  dir: "fromDb" | "toDb",
  body: (expr: Expr) => string,
  fallback: F,
): F {
  const conversions = lines.map((line) => line[dir]);
  const expr: Expr = (line, i, from) =>
    access(from, dir === "fromDb" ? line.column : line.field, conversions[i] === null ? null : i);
  try {
    return new Function("c", body(expr))(conversions) as F;
  } catch {
    // workerd: "Code generation from strings disallowed for this context".
    return fallback;
  }
}

const quote = (name: string) => JSON.stringify(name);

const generated: Builders = {
  reader(lines, rowNumber) {
    const numbered =
      rowNumber?.field === undefined
        ? []
        : [`${quote(String(rowNumber.field))}: row[${quote(rowNumber.column)}]`];
    const fields = lines.map((l, i) => (expr: Expr) => `${quote(l.field)}: ${expr(l, i, "row")}`);
    return generate(
      lines,
      "fromDb",
      (expr) =>
        `return function fromRow(row) { return { ${[...numbered, ...fields.map((f) => f(expr))].join(", ")} }; };`,
      looped.reader(lines, rowNumber),
    );
  },
  named: (lines) =>
    generate(
      lines,
      "toDb",
      (expr) =>
        `return function params(v) { return { ${lines.map((l, i) => `${quote(l.column)}: ${expr(l, i, "v")}`).join(", ")} }; };`,
      looped.named(lines),
    ),
  positional: (lines) =>
    generate(
      lines,
      "toDb",
      (expr) => `return function values(v) { return [${lines.map((l, i) => expr(l, i, "v")).join(", ")}]; };`,
      looped.positional(lines),
    ),
  changedMask: (lines) =>
    generate(
      lines,
      "toDb",
      () =>
        `return function changedMask(b, a) { let m = 0; ${lines
          .map((l, i) => `if (b[${quote(l.field)}] !== a[${quote(l.field)}]) m |= ${1 << i};`)
          .join(" ")} return m; };`,
      looped.changedMask(lines),
    ),
  masked: (lines) =>
    generate(
      lines,
      "toDb",
      (expr) =>
        `return function maskedChanges(v, m) { const out = []; ${lines
          .map((l, i) => `if ((m & ${1 << i}) !== 0) out.push(${expr(l, i, "v")});`)
          .join(" ")} return out; };`,
      looped.masked(lines),
    ),
  indexed(lines, rowNumber) {
    const first = rowNumber?.field === undefined ? 0 : 1;
    const numbered = first === 0 ? [] : [`${quote(String(rowNumber?.field))}: r[0]`];
    const conversions = lines.map((line) => line.fromDb);
    const at: At = (i, position) => (conversions[i] === null ? `r[${position}]` : `c[${i}](r[${position}])`);
    const fields = lines.map((l, i) => `${quote(l.field)}: ${at(i, first + i)}`);
    try {
      return new Function(
        "c",
        `return function fromValues(r) { return { ${[...numbered, ...fields].join(", ")} }; };`,
      )(conversions) as Indexed;
    } catch {
      return looped.indexed(lines, rowNumber);
    }
  },
};
