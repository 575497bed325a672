import { describe, expect, it } from "vitest";
import { PICK_NO_SORT, PICK_SQL, pickStatement } from "../../src/store/postgres/postgres-run-tx.js";
import { postgresSuite, useFreshSchema } from "../helpers/postgres.js";
import { T0 } from "../helpers/records.js";
import { makeRun } from "./contract/runs.js";

// Claims shared by replicas on PostgreSQL (round trips and the pick order are in the store
// contract, test/store/contract/runs.ts, for every store).
const { admin } = await postgresSuite("PostgreSQL runs store");

describe("PostgreSQL runs store", () => {
  const { open, schema } = useFreshSchema(admin);

  // The generic plan (the store prepares its statements) of a table filled faster than autovacuum
  // analyzes it: with `kind = ANY(...)` for one kind it read every queued run and sorted them, for
  // each claim (5 ms at 3,000 queued). Each pick must walk an index in run order and stop.
  it("a claim's pick, for one kind, several or any, walks an index in run order on a table never analyzed", async () => {
    const store = await open();
    await store.transaction(async (tx) => {
      for (let i = 0; i < 2000; i++) await tx.insertRun(makeRun(`run-${i}`, { kind: i % 2 ? "a" : "b" }));
    });
    // As the store plans it: in the claim's transaction, with sorting ruled out (SET LOCAL).
    const plan = async (text: string, types: string, values: string, sorts = false) => {
      const name = `pick_${types.length}_${text.length}`;
      await admin.unsafe(
        `SET search_path TO "${schema()}"; SET plan_cache_mode = force_generic_plan; PREPARE ${name}(${types}) AS ${text}`,
      );
      const [row] = await admin.begin(async (tx) => {
        if (!sorts) await tx.unsafe(PICK_NO_SORT);
        return tx.unsafe(`EXPLAIN (FORMAT JSON) EXECUTE ${name}(${values})`);
      });
      await admin.unsafe(`DEALLOCATE ${name}; RESET plan_cache_mode; RESET search_path`);
      return JSON.stringify(row);
    };
    const nodes = (json: string) => [...json.matchAll(/"Node Type":"([^"]+)"/g)].map((m) => m[1]);
    const oneKind = await plan(PICK_SQL.oneKind, "timestamptz, text", "now(), 'a'");
    expect(nodes(oneKind)).toEqual(["Limit", "LockRows", "Index Scan"]);
    expect(oneKind).toContain('"Index Name":"runs_queued"');
    // Even as a statement of its own, with sorting allowed: the index fits it whatever the statistics.
    expect(nodes(await plan(PICK_SQL.oneKind, "timestamptz, text", "now(), 'a'", true))).toEqual([
      "Limit",
      "LockRows",
      "Index Scan",
    ]);
    const any = await plan(PICK_SQL.any, "timestamptz", "now()");
    expect(nodes(any)).toEqual(["Limit", "LockRows", "Index Scan"]);
    expect(any).toContain('"Index Name":"runs_queued_any"');
    const several = await plan(PICK_SQL.kinds, "timestamptz, text[]", "now(), '{a,b}'");
    expect(nodes(several)).toEqual(["Limit", "LockRows", "Index Scan"]);
    // The store asks that way for one kind, however often it is named.
    const at = new Date(T0);
    // Only the picks that could sort rule sorting out first (a statement fewer for one kind).
    expect(pickStatement(["a", "a"], at)).toEqual({
      text: PICK_SQL.oneKind,
      values: [at, "a"],
      sorts: false,
    });
    expect(pickStatement(["a", "b", "a"], at)).toEqual({
      text: PICK_SQL.kinds,
      values: [at, ["a", "b"]],
      sorts: true,
    });
    expect(pickStatement(null, at)).toEqual({ text: PICK_SQL.any, values: [at], sorts: true });
    // What the change kept from: with sorting allowed, the kinds asked through ANY sort every queued run.
    expect(nodes(await plan(PICK_SQL.kinds, "timestamptz, text[]", "now(), '{a}'", true))).toContain("Sort");
    expect(nodes(await plan(PICK_SQL.any, "timestamptz", "now()", true))).toContain("Sort");
  });

  it("replicas claiming at the same moment skip each other's locked run", async () => {
    const [a, b] = [await open(), await open()];
    await a.transaction(async (tx) => {
      for (let i = 0; i < 3; i++) await tx.insertRun(makeRun(`run-${i}`));
    });
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let picked: () => void = () => {};
    const firstPicked = new Promise<void>((resolve) => {
      picked = resolve;
    });
    // The first claim holds its transaction open until the second has picked.
    const first = a.transaction(async (tx) => {
      const run = await tx.pickClaimableRun(null, T0);
      picked();
      await held;
      await tx.updateRun({ ...run!, status: "dispatching", version: run!.version + 1 }, run!.version);
      return run!.id;
    });
    await firstPicked;
    const second = await b.transaction(async (tx) => {
      const run = await tx.pickClaimableRun(null, T0);
      await tx.updateRun({ ...run!, status: "dispatching", version: run!.version + 1 }, run!.version);
      return run!.id;
    });
    release();
    expect([await first, second]).toEqual(["run-0", "run-1"]);
    expect(await a.runStats()).toEqual({ dispatching: 2, queued: 1 });
  });
});
