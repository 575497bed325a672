import { describe, expect, it } from "vitest";
import { toTime } from "../../src/store/postgres/postgres-values.js";
import { type ColumnSpec, defineTable, type TableMapping } from "../../src/store/row-mapping.js";
import { ATTEMPTS, EFFECTS, EVENTS, JOBS, RUN_EVENTS, RUNS } from "../../src/store/tables.js";
import { makeEffect, makeEvent, makeJob, T0 } from "../helpers/records.js";
import { makeAttempt, makeRun } from "./contract/runs.js";

// The mapping's generated functions (Node) against its loop (workerd, where code generation is
// refused): the same parameters, values and objects, keys in the same order, for every table.
const samples: [TableMapping<never, never>, Record<string, unknown>][] = [
  [JOBS, { ...makeJob({ id: "j1", metadata: { a: [1] }, registered: true }) }],
  [EVENTS, { ...makeEvent({ provider: "acme", id: "j1", applied: false, detail: { x: 1 } }), seqNo: 4 }],
  [EFFECTS, { ...makeEffect({ jobId: "j1", leaseUntil: T0 + 5 }) }],
  [RUNS, { ...makeRun("r1", { cancelRequested: true, output: [false] }) }],
  [ATTEMPTS, { ...makeAttempt("r1", 2, { startedAt: T0 + 1 }) }],
  [
    RUN_EVENTS,
    {
      seqNo: 9,
      dedupeKey: "d",
      runId: "r1",
      attemptId: null,
      actor: "api",
      type: "t",
      at: T0,
      detail: { n: 1 },
    },
  ] as never,
] as never;

/** The column each `?` binds, read from the SQL text: `(a, b) VALUES (?, ?)` or `a = ?, b = ?`. */
function placeholders(sql: string, form: "(" | "="): string[] {
  if (form === "(") {
    const [names = "", marks = ""] = sql.split(" VALUES ");
    const columns = names.replace(/[()]/g, "").split(", ");
    expect(marks).toBe(`(${columns.map(() => "?").join(", ")})`);
    return columns;
  }
  return sql.split(", ").map((assignment) => {
    const [column = "", mark] = assignment.split(" = ");
    expect(mark).toBe("?");
    return column;
  });
}

describe("row mapping: generated functions and the loop agree", () => {
  for (const [mapping, value] of samples) {
    it(`${mapping.spec.table}`, () => {
      const loop = defineTable(mapping.spec, { codegen: false });
      const rowNumber = mapping.spec.rowNumber ? { [mapping.spec.rowNumber.column]: 42 } : {};
      const same = (a: unknown, b: unknown) => {
        expect(a).toStrictEqual(b);
        if (a !== null && typeof a === "object") expect(Object.keys(a)).toEqual(Object.keys(b as object));
      };
      const params = mapping.sqlite.params(value as never);
      same(params, loop.sqlite.params(value as never));
      same(
        mapping.sqlite.fromRow({ ...params, ...rowNumber }),
        loop.sqlite.fromRow({ ...params, ...rowNumber }),
      );
      // SQLite by position: the same values as the named parameters, in the SQL's own order.
      const positional = mapping.sqlite.values(value as never);
      same(positional, loop.sqlite.values(value as never));
      same(
        positional,
        placeholders(mapping.sqlite.insertPositional, "(").map((c) => params[c]),
      );
      const changes = mapping.sqlite.changes(value as never);
      same(changes, loop.sqlite.changes(value as never));
      same(
        changes,
        placeholders(mapping.sqlite.assignmentsPositional, "=").map((c) => params[c]),
      );
      // A raw row in the select list's order reads back as the named row does.
      const listed = mapping.sqlite.selectList.split(", ");
      const raw = listed.map((c) => ({ ...params, ...rowNumber })[c]);
      same(mapping.sqlite.fromValues(raw), mapping.sqlite.fromRow({ ...params, ...rowNumber }));
      same(loop.sqlite.fromValues(raw), mapping.sqlite.fromRow({ ...params, ...rowNumber }));
      const values = mapping.postgres.values(value as never);
      same(values, loop.postgres.values(value as never));
      // node-postgres reads a timestamptz as a Date (a time is sent as ISO text, or a Date) and
      // jsonb parsed (it is sent as JSON text).
      const specs = Object.values(mapping.spec.columns) as ColumnSpec[];
      const asRead = (v: unknown, i: number) => {
        if (v === null) return v;
        const codec = specs[i]?.codec.name;
        return codec === "time"
          ? new Date(v as string | Date)
          : codec === "json"
            ? JSON.parse(v as string)
            : v;
      };
      const pgRow = Object.fromEntries(mapping.postgres.columns.map((c, i) => [c, asRead(values[i], i)]));
      same(
        mapping.postgres.fromRow({ ...pgRow, ...rowNumber }),
        loop.postgres.fromRow({ ...pgRow, ...rowNumber }),
      );
      // PostgreSQL's one-column read: the row number (when the object has it) and every field as
      // it is, times as epoch ms, JSON parsed.
      const fields = Object.keys(mapping.spec.columns);
      const array = [...(mapping.spec.rowNumber?.field ? [42] : []), ...fields.map((f) => value[f])];
      same(mapping.postgres.fromArray(array), mapping.postgres.fromRow({ ...pgRow, ...rowNumber }));
      same(loop.postgres.fromArray(array), mapping.postgres.fromArray(array));
      const listOf = (select: string) => select.replace(/^json_build_array\((.*)\)$/, "$1").split(", ");
      const expected = (q: string) => [
        ...(mapping.spec.rowNumber?.field ? [q + mapping.spec.rowNumber.column] : []),
        ...specs.map((c) =>
          c.codec.name === "time" ? `round(extract(epoch FROM ${q}${c.column}) * 1000)` : q + c.column,
        ),
      ];
      expect(listOf(mapping.postgres.selectArray)).toEqual(expected(""));
      // Of a row-typed value (finality_ingest's job): the same list, each column of that value.
      expect(listOf(mapping.postgres.selectArrayOf("(r.job)"))).toEqual(expected("(r.job)."));
      // The SQLite round trip gives back the object (the row number filling seqNo where there is one).
      const back = mapping.sqlite.fromRow({ ...params, ...rowNumber }) as Record<string, unknown>;
      const field = mapping.spec.rowNumber?.field;
      expect(back).toEqual(field ? { ...value, [field]: 42 } : value);
    });
  }

  it("the columns that moved: a bit each, their SET list and values, generated and looped alike", () => {
    const loop = defineTable(JOBS.spec, { codegen: false });
    const before = makeJob({ id: "j1", metadata: { a: 1 } });
    const after = { ...before, version: 2, maxSeq: 4, metadata: { a: 1 } };
    for (const mapping of [JOBS, loop]) {
      expect(mapping.sqlite.changedMask(before, { ...before })).toBe(0);
      const mask = mapping.sqlite.changedMask(before, after);
      // A JSON value is compared by reference: an equal new object is written.
      expect(mapping.sqlite.assignmentsFor(mask)).toBe("version = ?, max_seq = ?, metadata = ?");
      expect(mapping.sqlite.maskedChanges(after, mask)).toEqual([2, 4, '{"a":1}']);
    }
    expect(JOBS.sqlite.changedMask.name).toBe("changedMask");
    expect(JOBS.sqlite.maskedChanges.name).toBe("maskedChanges");
  });

  it("PostgreSQL's columns that moved: numbered from the first parameter asked, JSON cast, values converted", () => {
    const loop = defineTable(RUNS.spec, { codegen: false });
    const before = makeRun("r1");
    const after = { ...before, version: 2, output: { a: 1 }, updatedAt: T0 + 5, input: { frames: [9] } };
    for (const mapping of [RUNS, loop]) {
      expect(mapping.postgres.changedMask(before, { ...before })).toBe(0);
      const mask = mapping.postgres.changedMask(before, after);
      // The input is set once: never in an UPDATE's SET, moved or not.
      expect(mapping.postgres.assignmentsFor(mask, 2)).toBe(
        "version = $2, output = $3::text::jsonb, updated_at = $4",
      );
      expect(mapping.postgres.maskedChanges(after, mask)).toEqual([2, '{"a":1}', toTime(T0 + 5)]);
      expect(mapping.postgres.changedMask(before, after)).toBe(mapping.sqlite.changedMask(before, after));
    }
    expect(RUNS.postgres.changedMask.name).toBe("changedMask");
    expect(RUNS.postgres.maskedChanges.name).toBe("maskedChanges");
  });

  it("Node runs the generated functions, not the loop", () => {
    for (const [mapping] of samples) {
      expect([mapping.sqlite.fromRow.name, mapping.sqlite.params.name]).toEqual(["fromRow", "params"]);
      expect([mapping.sqlite.values.name, mapping.sqlite.changes.name]).toEqual(["values", "values"]);
      expect(mapping.sqlite.fromValues.name).toBe("fromValues");
      expect([mapping.postgres.fromRow.name, mapping.postgres.values.name]).toEqual(["fromRow", "values"]);
      expect(mapping.postgres.fromArray.name).toBe("fromValues");
    }
  });
});
