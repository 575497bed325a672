import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { CodecName, ColumnSpec } from "../../src/store/row-mapping.js";
import { MAPPED_TABLES } from "../../src/store/tables.js";
import { type DeclaredColumn, postgresColumns, sqliteColumns } from "./schema/dump.js";

// Every column of a mapped table in the committed schema dumps (which schema-drift.test.ts holds
// to the migrations) has a mapping line in src/store/tables.ts, and every line a column, with a
// codec and nullability that fit the column's declared type.
const dumps = {
  sqlite: sqliteColumns(readFileSync(new URL("./schema/sqlite.sql", import.meta.url), "utf8")),
  postgres: postgresColumns(readFileSync(new URL("./schema/postgres.txt", import.meta.url), "utf8")),
};

/** The declared types each codec may read and write. */
const TYPES: Record<"sqlite" | "postgres", Record<CodecName, readonly string[]>> = {
  sqlite: {
    text: ["TEXT"],
    int: ["INTEGER"],
    // max_update_time: INTEGER affinity keeps a fractional value as REAL.
    real: ["INTEGER", "REAL"],
    bool: ["INTEGER"],
    json: ["TEXT"],
    time: ["INTEGER"],
  },
  postgres: {
    text: ["text"],
    int: ["integer", "bigint"],
    real: ["double precision"],
    bool: ["boolean"],
    json: ["jsonb"],
    time: ["timestamp with time zone"],
  },
};

/** What a mapping line says about its column, in the shape the dump says it. */
function described(dialect: "sqlite" | "postgres", line: ColumnSpec) {
  return { name: line.column, types: TYPES[dialect][line.codec.name], nullable: line.nullable };
}

describe.each(["sqlite", "postgres"] as const)("mapping lines against the %s schema dump", (dialect) => {
  for (const mapping of MAPPED_TABLES) {
    const { table, rowNumber, columns } = mapping.spec;
    it(`${table}: one mapping line per column, codec and nullability fitting`, () => {
      const declared = dumps[dialect].get(table);
      expect(declared, `${table} is not in the ${dialect} dump`).toBeDefined();
      const byName = new Map((declared as DeclaredColumn[]).map((c) => [c.name, c]));
      const lines = Object.values(columns) as ColumnSpec[];
      const numbered = rowNumber ? [rowNumber.column] : [];
      expect([...byName.keys()].sort()).toEqual([...numbered, ...lines.map((l) => l.column)].sort());
      for (const line of lines) {
        const column = byName.get(line.column) as DeclaredColumn;
        const want = described(dialect, line);
        expect(
          { name: column.name, typeFits: want.types.includes(column.type), nullable: column.nullable },
          `${table}.${line.column}: declared ${column.type}`,
        ).toEqual({ name: want.name, typeFits: true, nullable: want.nullable });
      }
    });
  }
});
