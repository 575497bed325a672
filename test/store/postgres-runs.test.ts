import { describe, expect, it } from "vitest";
import type { Attempt, Run } from "../../src/core/run-model.js";
import { postgresSuite, useFreshSchema } from "../helpers/postgres.js";
import { T0 } from "../helpers/records.js";

// The runs part of the port on PostgreSQL: round trips, and claims shared by replicas.
const { enabled, admin } = await postgresSuite("PostgreSQL runs store");

function makeRun(id: string, overrides: Partial<Run> = {}): Run {
  return {
    id,
    kind: "render",
    status: "queued",
    version: 1,
    input: { frames: [1, 2] },
    output: null,
    error: null,
    idempotencyKey: null,
    maxAttempts: 3,
    attemptCount: 0,
    generation: 0,
    currentAttemptId: null,
    cancelRequested: false,
    availableAt: T0,
    createdAt: T0,
    updatedAt: T0,
    settledAt: null,
    ...overrides,
  };
}

function makeAttempt(run: Run, overrides: Partial<Attempt> = {}): Attempt {
  return {
    id: `${run.id}-a1`,
    runId: run.id,
    workerId: "w1",
    generation: 1,
    status: "claimed",
    lastSequence: null,
    leaseMs: 30_000,
    leaseExpiresAt: T0 + 30_000,
    version: 1,
    output: null,
    error: null,
    progress: { pct: 5 },
    claimedAt: T0,
    startedAt: null,
    heartbeatAt: null,
    endedAt: null,
    updatedAt: T0,
    ...overrides,
  };
}

describe.skipIf(!enabled)("PostgreSQL runs store", () => {
  const { open } = useFreshSchema(admin);

  it("stores runs, attempts and events unchanged, with CAS and dedupe", async () => {
    const store = await open();
    const run = makeRun("r1", { idempotencyKey: "k1" });
    const attempt = makeAttempt(run);
    const written = await store.transaction(async (tx) => [
      await tx.insertRun(run),
      await tx.insertRun({ ...run, id: "r2" }),
      await tx.insertAttempt(attempt),
      await tx.insertAttempt({ ...attempt, id: "other" }),
      await tx.updateRun({ ...run, status: "dispatching", version: 2 }, 1),
      await tx.updateRun({ ...run, status: "failed", version: 2 }, 1),
      await tx.appendRunEvent({
        dedupeKey: "e1",
        runId: "r1",
        attemptId: null,
        actor: "api",
        type: "x",
        at: T0,
        detail: null,
      }),
      await tx.appendRunEvent({
        dedupeKey: "e1",
        runId: "r1",
        attemptId: null,
        actor: "api",
        type: "y",
        at: T0,
        detail: null,
      }),
    ]);
    expect(written).toEqual([true, false, true, false, true, false, true, false]);
    expect(await store.getRun("r1")).toEqual({ ...run, status: "dispatching", version: 2 });
    expect(await store.transaction((tx) => tx.getRunByIdempotencyKey("k1"))).toMatchObject({ id: "r1" });
    expect(await store.runAttempts("r1")).toEqual([attempt]);
    expect(await store.transaction((tx) => tx.getAttempt(attempt.id))).toEqual(attempt);
    expect((await store.runEvents("r1")).map((e) => e.type)).toEqual(["x"]);
    expect(await store.dueLeases(T0 + 30_000, 10)).toEqual([
      { attemptId: attempt.id, runId: "r1", leaseExpiresAt: T0 + 30_000 },
    ]);
    expect(await store.dueLeases(T0 + 29_999, 10)).toEqual([]);
    expect(await store.nextLeaseExpiry()).toBe(T0 + 30_000);
    expect(await store.runStats()).toEqual({ dispatching: 1 });
    expect((await store.listRuns({ status: "dispatching" })).items.map((r) => r.id)).toEqual(["r1"]);
  });

  it("picks the oldest claimable run of the asked kinds", async () => {
    const store = await open();
    await store.transaction(async (tx) => {
      await tx.insertRun(makeRun("cancelled", { cancelRequested: true }));
      await tx.insertRun(makeRun("later", { availableAt: T0 + 1 }));
      await tx.insertRun(makeRun("email", { kind: "email" }));
      await tx.insertRun(makeRun("render"));
    });
    const pick = (kinds: string[] | null) =>
      store.transaction(async (tx) => (await tx.pickClaimableRun(kinds, T0))?.id ?? null);
    expect(await pick(null)).toBe("email");
    expect(await pick(["render"])).toBe("render");
    expect(await pick(["render", "email"])).toBe("email");
    expect(await pick([])).toBeNull();
    expect(await pick(["video"])).toBeNull();
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
