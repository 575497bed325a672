import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { exceedsDepth, jsonSize, LIMITS } from "../../src/core/validation.js";
import { createFinality } from "../../src/engine/create-finality.js";
import { outcomeValueText } from "../fuzz/arbitraries.js";
import { engineOf } from "../helpers/engine.js";
import { postgresSuite, useFreshSchema } from "../helpers/postgres.js";

// What a provider may send that PostgreSQL cannot hold as sent: a NUL in a text column, an index
// entry over ~2.7 KB, JSON deeper than JSON.stringify can write. Each used to fail the write (a 500
// on every retry of the webhook, a failed transaction on every poll); each must now be stored.
const { admin } = await postgresSuite("PostgreSQL: unstorable provider values");

const deep = (depth: number): unknown => JSON.parse(`${"[".repeat(depth)}${"]".repeat(depth)}`);

describe("PostgreSQL keeps the state of observations with unstorable parts", () => {
  const fresh = useFreshSchema(admin);

  it("an unknown state and raw state with NUL and 100 KB of text are recorded, not a failed write", async () => {
    const finality = createFinality({ store: await fresh.open() });
    const key = { provider: "generic", id: "nul-state" };
    await engineOf(finality).ingestTrusted({ ...key, state: "running", source: "webhook" });
    const outcome = await engineOf(finality).ingestTrusted({
      ...key,
      state: `weird\u0000${"s".repeat(100_000)}`,
      rawState: "a\u0000b",
      source: "reconcile",
    });
    expect(outcome).toMatchObject({ applied: false, reason: "unknown-state" });
    const event = (await finality.jobEvents(key)).at(-1);
    expect(event?.rawState).toBe("a\ufffdb");
    expect(event?.state.length).toBeLessThanOrEqual(128);
    expect(event?.state.startsWith("weird\ufffd")).toBe(true);
  });

  it("a 3,000-character delivery id is keyed by its hash: stored, and its redelivery is a duplicate", async () => {
    const finality = createFinality({ store: await fresh.open() });
    const key = { provider: "generic", id: "long-id" };
    const deliveryId = `msg_${"x".repeat(3_000)}`;
    const first = await engineOf(finality).ingestTrusted({
      ...key,
      state: "succeeded",
      source: "webhook",
      deliveryId,
    });
    expect(first).toMatchObject({ applied: true, settled: true });
    const again = await engineOf(finality).ingestTrusted({
      ...key,
      state: "succeeded",
      source: "webhook",
      deliveryId,
    });
    expect(again).toMatchObject({ applied: false, reason: "duplicate-delivery" });
    expect((await finality.jobEvents(key))[0]?.deliveryId).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it("an error 5,000 levels deep with a NUL settles the job, the error cut and marked", async () => {
    const finality = createFinality({ store: await fresh.open() });
    const key = { provider: "generic", id: "deep-error" };
    const outcome = await engineOf(finality).ingestTrusted({
      ...key,
      state: "failed",
      source: "webhook",
      error: { message: "bad\u0000", detail: deep(5_000) },
      result: { note: "kept\u0000" },
    });
    expect(outcome).toMatchObject({ applied: true, settled: true });
    const job = await finality.getJob(key);
    expect(job?.state).toBe("failed");
    expect(job?.error).toMatchObject({ truncated: true, reason: "too-deep" });
    expect(job?.result).toEqual({ note: "kept\ufffd" });
  });

  it("fuzzed: any result, error and state name a provider may send is stored, the state kept", async () => {
    const finality = createFinality({ store: await fresh.open() });
    let serial = 0;
    await fc.assert(
      fc.asyncProperty(
        outcomeValueText,
        outcomeValueText,
        fc.oneof(fc.constantFrom("succeeded", "failed"), fc.string({ unit: "binary", maxLength: 300 })),
        async (result, error, state) => {
          const key = { provider: "generic", id: `fz-${++serial}` };
          const outcome = await engineOf(finality).ingestTrusted({
            ...key,
            state,
            rawState: state,
            source: "webhook",
            deliveryId: `d\u0000${"x".repeat(serial % 3 === 0 ? 3_000 : 10)}${serial}`,
            result: JSON.parse(result),
            error: JSON.parse(error),
          });
          if (state !== "succeeded" && state !== "failed") {
            expect(outcome.reason).toBe("unknown-state");
            return;
          }
          const job = await finality.getJob(key);
          expect(job?.state).toBe(state);
          for (const value of [job?.result, job?.error]) {
            expect(exceedsDepth(value, LIMITS.jsonDepth)).toBe(false);
            expect(jsonSize(value) ?? 0).toBeLessThanOrEqual(LIMITS.resultBytes);
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
