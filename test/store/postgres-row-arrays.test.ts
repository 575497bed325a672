import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Attempt, Run } from "../../src/core/run-model.js";
import { createClient } from "../../src/store/postgres/postgres-client.js";
import { ATTEMPTS, RUN_EVENTS, RUNS } from "../../src/store/tables.js";
import { POSTGRES_TEST_URL, postgresSuite, useFreshSchema } from "../helpers/postgres.js";

// Runs and attempts are read as one json column (`selectArray`, `fromArray`), not `SELECT *`
// (`fromRow`). Both reads of any row the store can write must give the same object, keys in the
// same order: every time (BC years included), JSON value, flag, null and integer.
const { admin } = await postgresSuite("PostgreSQL: rows read as one json array");

const EARLIEST_TIMESTAMPTZ_MS = -210_866_803_200_000; // 4713-11-24 BC
const LATEST_DATE_MS = 8_640_000_000_000_000;
const time = fc.oneof(
  fc.integer({ min: EARLIEST_TIMESTAMPTZ_MS, max: LATEST_DATE_MS }),
  fc.integer({ min: 0, max: 4_102_444_800_000 }),
);
const json = fc.oneof(fc.constant(null), fc.jsonValue({ maxDepth: 3 }));
const text = fc.string({ unit: "grapheme", maxLength: 12 }).filter((s) => !s.includes("\u0000"));
const int = fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
const bigint = fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER });

const runArb: fc.Arbitrary<Omit<Run, "id">> = fc.record({
  kind: text,
  status: fc.constantFrom("queued", "running", "succeeded", "failed", "canceled"),
  version: int,
  input: json,
  output: json,
  error: json,
  idempotencyKey: fc.constant(null),
  maxAttempts: int,
  attemptCount: int,
  generation: int,
  currentAttemptId: fc.option(text),
  cancelRequested: fc.boolean(),
  availableAt: time,
  createdAt: time,
  updatedAt: time,
  settledAt: fc.option(time),
}) as fc.Arbitrary<Omit<Run, "id">>;

const attemptArb: fc.Arbitrary<Omit<Attempt, "id" | "runId">> = fc.record({
  workerId: text,
  generation: int,
  status: fc.constantFrom("claimed", "running", "succeeded", "failed", "lost", "released"),
  lastSequence: fc.option(bigint),
  leaseMs: bigint,
  leaseExpiresAt: fc.option(time),
  version: int,
  output: json,
  error: json,
  progress: json,
  claimedAt: time,
  startedAt: fc.option(time),
  heartbeatAt: fc.option(time),
  endedAt: fc.option(time),
  updatedAt: time,
}) as fc.Arbitrary<Omit<Attempt, "id" | "runId">>;

function sameObject(a: unknown, b: unknown): void {
  expect(a).toStrictEqual(b);
  expect(Object.keys(a as object)).toEqual(Object.keys(b as object));
}

describe("rows read as one json array", () => {
  const fresh = useFreshSchema(admin);

  it("runs, attempts and run events: the array read equals the column read, for drawn rows", async () => {
    await (await fresh.open()).close(); // migrates the schema
    const sql = createClient({ url: POSTGRES_TEST_URL, schema: fresh.schema(), max: 1 });
    try {
      let n = 0;
      await fc.assert(
        fc.asyncProperty(
          runArb,
          attemptArb,
          fc.option(json),
          time,
          async (drawnRun, drawnAttempt, detail, at) => {
            n++;
            const run = { id: `r${n}`, ...drawnRun } as Run;
            const attempt = { id: `a${n}`, runId: run.id, ...drawnAttempt } as Attempt;
            await sql.unsafe(`INSERT INTO runs ${RUNS.postgres.insert}`, RUNS.postgres.values(run), {
              prepare: true,
            });
            await sql.unsafe(
              `INSERT INTO attempts ${ATTEMPTS.postgres.insert}`,
              ATTEMPTS.postgres.values(attempt),
              {
                prepare: true,
              },
            );
            const event = {
              dedupeKey: `e${n}`,
              runId: run.id,
              attemptId: null,
              actor: "api" as const,
              type: "t",
              at,
              detail,
            };
            await sql.unsafe(
              `INSERT INTO run_events ${RUN_EVENTS.postgres.insert}`,
              RUN_EVENTS.postgres.values(event),
              {
                prepare: true,
              },
            );
            for (const [mapping, where, key] of [
              [RUNS, "runs WHERE id = $1", run.id],
              [ATTEMPTS, "attempts WHERE id = $1", attempt.id],
              [RUN_EVENTS, "run_events WHERE dedupe_key = $1", event.dedupeKey],
            ] as const) {
              const [row] = await sql.unsafe<Record<string, unknown>>(`SELECT * FROM ${where}`, [key], {
                prepare: true,
              });
              const [array] = await sql.unsafe<{ r: unknown[] }>(
                `SELECT ${mapping.postgres.selectArray} AS r FROM ${where}`,
                [key],
                { prepare: true },
              );
              sameObject(
                mapping.postgres.fromArray((array as { r: unknown[] }).r),
                mapping.postgres.fromRow(row as never),
              );
            }
            // What the store wrote is what it reads, but for JSON (jsonb orders keys; -0 is 0).
            const [read] = await sql.unsafe<{ r: unknown[] }>(
              `SELECT ${RUNS.postgres.selectArray} AS r FROM runs WHERE id = $1`,
              [run.id],
              { prepare: true },
            );
            const back = RUNS.postgres.fromArray((read as { r: unknown[] }).r) as Run;
            for (const field of [
              "availableAt",
              "createdAt",
              "updatedAt",
              "settledAt",
              "version",
              "cancelRequested",
              "kind",
            ] as const) {
              expect(back[field]).toBe(run[field]);
            }
          },
        ),
        { numRuns: 150 },
      );
    } finally {
      await sql.end();
    }
  });
});
