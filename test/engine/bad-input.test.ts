import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TIMESTAMP_BOUNDS } from "../../src/core/bounds.js";
import { manualClock } from "../../src/core/clock.js";
import { isFinalityError } from "../../src/core/errors.js";
import { LIMITS, type ObservationInput, type RegistrationInput } from "../../src/core/validation.js";
import { createFinality } from "../../src/engine/create-finality.js";
import type { Finality } from "../../src/engine/finality.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { engineOf } from "../helpers/engine.js";
import { snapshot } from "../helpers/snapshot.js";
import { type TempDir, tempDir } from "../helpers/temp-dir.js";

const KEY = { provider: "generic", id: "existing" };
const valid: ObservationInput = { ...KEY, state: "succeeded", source: "webhook", seq: 5 };
const nested = (depth: number): unknown => JSON.parse(`${"[".repeat(depth)}${"]".repeat(depth)}`);
const cyclic: Record<string, unknown> = {};
cyclic.self = cyclic;

const badObservations: [string, unknown, string][] = [
  ["null", null, "invalid-observation"],
  ["a string", "succeeded", "invalid-observation"],
  ["a number", 42, "invalid-observation"],
  ["an array", [valid], "invalid-observation"],
  ["no state", { ...KEY, source: "webhook" }, "invalid-observation"],
  ["no source", { ...KEY, state: "succeeded" }, "invalid-observation"],
  ["no id", { provider: "generic", state: "succeeded", source: "webhook" }, "invalid-observation"],
  ["state not a string", { ...valid, state: 2 }, "invalid-observation"],
  ["seq as a string", { ...valid, seq: "5" }, "invalid-observation"],
  ["negative seq", { ...valid, seq: -1 }, "invalid-observation"],
  ["fractional seq", { ...valid, seq: 1.5 }, "invalid-observation"],
  ["updateTime not a date", { ...valid, updateTime: "yesterday" }, "invalid-observation"],
  ["negative updateTime", { ...valid, updateTime: -5 }, "invalid-observation"],
  ["unknown source", { ...valid, source: "email" }, "invalid-observation"],
  ["empty id", { ...valid, id: "" }, "invalid-observation"],
  ["id with NUL", { ...valid, id: "exist\u0000ing" }, "invalid-observation"],
  ["id with newline", { ...valid, id: "existing\n" }, "invalid-observation"],
  ["id with a C1 control", { ...valid, id: "existing\u009b" }, "invalid-observation"],
  ["id too long", { ...valid, id: "x".repeat(LIMITS.jobIdLength + 1) }, "invalid-observation"],
  ["provider in uppercase", { ...valid, provider: "Generic" }, "invalid-observation"],
  ["provider with a space", { ...valid, provider: "my provider" }, "invalid-observation"],
  [
    "delivery id too long",
    { ...valid, deliveryId: "d".repeat(LIMITS.deliveryIdLength + 1) },
    "invalid-observation",
  ],
  ["updateTime before 2000", { ...valid, updateTime: TIMESTAMP_BOUNDS.minMs - 1 }, "invalid-observation"],
  ["updateTime after 2200", { ...valid, updateTime: TIMESTAMP_BOUNDS.maxMs + 1 }, "invalid-observation"],
  ["updateTime past Date's range", { ...valid, updateTime: 1e300 }, "invalid-observation"],
  ["updateTime as a year-9999 date", { ...valid, updateTime: "9999-12-31T23:59:59Z" }, "invalid-observation"],
  ["unknown provider", { ...valid, provider: "openai" }, "unknown-provider"],
];

describe("bad input through createFinality", () => {
  let dir: TempDir;
  let finality: Finality;

  beforeEach(async () => {
    dir = tempDir("finality-bad-input-");
    finality = createFinality({
      store: createSqliteStore({ path: dir.file("ledger.db") }),
      providers: { generic: {} },
      clock: manualClock(),
      effects: [{ name: "notify", handler: async () => {} }],
    });
    await finality.register({ ...KEY, kind: "batch", metadata: { owner: "a" } });
    await finality.ingest({ ...KEY, state: "running", source: "webhook", seq: 1, deliveryId: "d-1" });
  });
  afterEach(async () => {
    await finality.close();
    dir.cleanup();
  });

  it.each(badObservations)(
    "refuses %s with a typed error and changes nothing",
    async (_name, input, code) => {
      const before = await snapshot(engineOf(finality).store, KEY);
      const withDelivery = typeof input === "object" && input !== null && !Array.isArray(input);
      // What the types refuse can still arrive (from JavaScript, or past a cast): validation refuses it.
      const untyped = (withDelivery ? { deliveryId: "d-refused", ...input } : input) as ObservationInput;
      const error = await finality.ingest(untyped).then(
        () => null,
        (e: unknown) => e,
      );
      expect(isFinalityError(error), String(error)).toBe(true);
      expect(error).toMatchObject({ code });
      expect(await snapshot(engineOf(finality).store, KEY)).toEqual(before);
      // The refused observation's delivery id was not consumed: a valid delivery with it applies.
      const retry = await finality.ingest({ ...valid, deliveryId: "d-refused" });
      expect(retry).toMatchObject({ applied: true, settled: true });
    },
  );

  // An oversized or unstorable result or error never costs the state: the state is applied and
  // the value is stored as a marked stand-in, and the event says which field was cut.
  const unstorable: [string, Record<string, unknown>, "result" | "error", string][] = [
    ["a cyclic result", { result: cyclic }, "result", "too-deep"],
    ["a result over the limit", { result: "r".repeat(LIMITS.resultBytes) }, "result", "too-large"],
    ["an error over the limit", { error: { trace: "e".repeat(LIMITS.resultBytes) } }, "error", "too-large"],
    ["an error 5,000 levels deep", { error: nested(5_000) }, "error", "too-deep"],
    ["a result of a BigInt", { result: { n: 10n } }, "result", "not-json"],
  ];
  it.each(unstorable)(
    "applies the state of an observation with %s, the value cut and marked",
    async (_name, fields, field, reason) => {
      const outcome = await finality.ingest({ ...valid, ...fields, deliveryId: "d-big" });
      expect(outcome).toMatchObject({ applied: true, settled: true, effects: ["notify"] });
      const job = await finality.getJob(KEY);
      expect(job?.state).toBe("succeeded");
      expect(job?.[field]).toMatchObject({ truncated: true, reason });
      expect((await finality.jobEvents(KEY)).at(-1)?.detail).toMatchObject({ truncated: [field] });
    },
  );

  it("refuses oversized or malformed registrations with a typed error and changes nothing", async () => {
    const before = await snapshot(engineOf(finality).store, KEY);
    const big = { blob: "m".repeat(LIMITS.metadataBytes) };
    const cases: [unknown, string][] = [
      [{ ...KEY, metadata: big }, "payload-too-large"],
      [{ provider: "generic", id: "new-job", metadata: big }, "payload-too-large"],
      [{ ...KEY, kind: "bat\u0007ch" }, "invalid-request"],
      [{ ...KEY, provider: "GENERIC" }, "invalid-request"],
      [{ provider: "openai", id: "x" }, "unknown-provider"],
      ["existing", "invalid-request"],
    ];
    for (const [input, code] of cases) {
      const error = await finality.register(input as RegistrationInput).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error, JSON.stringify(input)?.slice(0, 80)).toMatchObject({ code });
    }
    expect(await snapshot(engineOf(finality).store, KEY)).toEqual(before);
    expect(await finality.getJob({ provider: "generic", id: "new-job" })).toBeNull();
  });

  it("records an unknown state as an event and leaves the job as it was", async () => {
    const before = await snapshot(engineOf(finality).store, KEY);
    const outcome = await finality.ingest({
      ...KEY,
      state: "JOB_STATE_PAUSED",
      source: "reconcile",
      seq: 99,
    });
    expect(outcome).toMatchObject({ applied: false, reason: "unknown-state", settled: false, effects: [] });
    const after = await snapshot(engineOf(finality).store, KEY);
    expect(after.job).toEqual(before.job);
    expect(after.effects).toEqual(before.effects);
    expect(after.events.slice(0, -1)).toEqual(before.events);
    expect(after.events.at(-1)).toMatchObject({
      state: "JOB_STATE_PAUSED",
      applied: false,
      reason: "unknown-state",
    });
    // A later valid observation is judged against the unchanged job (seq 99 was not kept).
    expect(await finality.ingest({ ...KEY, state: "running", source: "webhook", seq: 2 })).toMatchObject({
      applied: true,
    });
  });

  it("records an unknown state of an unknown job without creating it", async () => {
    const key = { provider: "generic", id: "never-seen" };
    const outcome = await finality.ingest({ ...key, state: "paused", source: "webhook" });
    expect(outcome).toMatchObject({ applied: false, reason: "unknown-state", job: null });
    expect(await finality.getJob(key)).toBeNull();
    expect(await finality.jobEvents(key)).toEqual([expect.objectContaining({ reason: "unknown-state" })]);
  });
});

describe("a transactional effect that throws", () => {
  let dir: TempDir;
  let finality: Finality;
  let refuse: boolean;
  const bad = { provider: "generic", id: "bad" };
  const good = { provider: "generic", id: "good" };
  const billed = async () =>
    (
      await engineOf(finality).store.transaction((tx) =>
        tx.execute("SELECT job_id FROM billing ORDER BY job_id"),
      )
    ).map((row) => row.job_id);

  beforeEach(async () => {
    dir = tempDir("finality-tx-effect-");
    refuse = true;
    finality = createFinality({
      store: createSqliteStore({ path: dir.file("ledger.db") }),
      clock: manualClock(),
      effects: [
        {
          name: "bill",
          // Writes to the application's own table in the ingest transaction, then may refuse.
          transactional: async (job, tx) => {
            await tx.execute("INSERT INTO billing (job_id) VALUES (?)", [job.id]);
            if (refuse && job.id === "bad") throw new Error("billing refused");
          },
        },
        { name: "notify", handler: async () => {} },
      ],
    });
    await engineOf(finality).store.transaction((tx) =>
      tx.execute("CREATE TABLE billing (job_id TEXT PRIMARY KEY)"),
    );
    for (const key of [bad, good])
      await finality.ingest({
        ...key,
        state: "running",
        source: "webhook",
        seq: 1,
        deliveryId: `${key.id}-1`,
      });
  });
  afterEach(async () => {
    await finality.close();
    dir.cleanup();
  });

  it("rejects the ingest and leaves no trace of it, while another ingest in the same group commits", async () => {
    const before = await snapshot(engineOf(finality).store, bad);
    // Started in the same tick, so that both join one group commit.
    const [refused, accepted] = await Promise.allSettled([
      finality.ingest({ ...bad, state: "succeeded", source: "webhook", seq: 2, deliveryId: "bad-2" }),
      finality.ingest({ ...good, state: "succeeded", source: "webhook", seq: 2, deliveryId: "good-2" }),
    ]);
    expect(refused).toMatchObject({ status: "rejected", reason: { message: "billing refused" } });
    expect(accepted).toMatchObject({ status: "fulfilled", value: { applied: true, settled: true } });
    expect((accepted as PromiseFulfilledResult<{ effects: string[] }>).value.effects.sort()).toEqual([
      "bill",
      "notify",
    ]);

    expect(await snapshot(engineOf(finality).store, bad)).toEqual(before);
    expect(before.job).toMatchObject({ state: "running", version: 1 });
    expect(await finality.getJob(good)).toMatchObject({ state: "succeeded" });
    const goodAfter = await snapshot(engineOf(finality).store, good);
    expect(goodAfter.effects.map((e) => e.name)).toEqual(["notify"]);
    expect(goodAfter.events.map((e) => e.state)).toEqual(["running", "succeeded"]);
    expect(await billed()).toEqual(["good"]);

    // The sender retries the same delivery once the effect accepts it: applied exactly once.
    refuse = false;
    const retried = await finality.ingest({
      ...bad,
      state: "succeeded",
      source: "webhook",
      seq: 2,
      deliveryId: "bad-2",
    });
    expect(retried).toMatchObject({ applied: true, settled: true });
    expect(await billed()).toEqual(["bad", "good"]);
    expect((await snapshot(engineOf(finality).store, bad)).effects).toHaveLength(1);
  });
});
