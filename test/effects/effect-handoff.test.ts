import { afterEach, describe, expect, it } from "vitest";
import { manualClock } from "../../src/core/clock.js";
import type { Job } from "../../src/core/model.js";
import { createFinality } from "../../src/engine/create-finality.js";
import { createDispatcher, type DeliveryAttempt } from "../../src/engine/dispatcher.js";
import type { EffectDefinition } from "../../src/engine/effect-definitions.js";
import type { Finality } from "../../src/engine/finality.js";
import { engineOf } from "../helpers/engine.js";
import { tempDir } from "../helpers/temp-dir.js";

// A running dispatcher takes the effects its ledger's ingests enqueue straight from their
// transactions: the row is inserted claimed (leased to it) and handed over once the commit has
// returned, so no claim transaction runs for it. Everything here is about what that must not
// change: rollbacks hand nothing over, a full dispatcher leaves rows pending, and a row handed
// to a process that dies, or to a dispatcher that stopped, is delivered all the same.

const dirs: { cleanup(): void }[] = [];
const open: Finality[] = [];
afterEach(async () => {
  for (const f of open.splice(0)) await f.close();
  for (const d of dirs.splice(0)) d.cleanup();
});

function ledger(effects: EffectDefinition[], file?: string, unknownJobs?: "adopt" | "registered-only") {
  const dir = tempDir();
  dirs.push(dir);
  const clock = manualClock();
  const path = file ?? dir.file("ledger.db");
  const providers = unknownJobs === undefined ? {} : { providers: { acme: { unknownJobs } } };
  const finality = createFinality({ store: { sqlite: path }, clock, effects, ...providers });
  open.push(finality);
  return { finality, clock, path };
}

const settle = (finality: Finality, id: string) =>
  finality.ingest({ provider: "acme", id, state: "succeeded", source: "webhook", deliveryId: `d-${id}` });

/**
 * Counts the claim transactions the store runs (each is one, whether it finds rows or not);
 * `started()` resolves once the dispatcher's first tick has claimed and that claim has ended.
 */
function countClaims(finality: Finality) {
  const store = engineOf(finality).store;
  const claimEffects = store.claimEffects.bind(store);
  let first = () => {};
  const firstEnded = new Promise<void>((resolve) => {
    first = resolve;
  });
  const counted = { claims: 0, started: () => firstEnded };
  store.claimEffects = (...args) => {
    counted.claims++;
    const claim = claimEffects(...args);
    void claim.finally(first).catch(() => {});
    return claim;
  };
  return counted;
}

/** Resolves with each attempt as the dispatcher reports it. */
function attempts() {
  const seen: DeliveryAttempt[] = [];
  const waiting: { count: number; resolve: () => void }[] = [];
  return {
    seen,
    onAttempt(attempt: DeliveryAttempt) {
      seen.push(attempt);
      for (const w of waiting.filter((w) => seen.length >= w.count)) w.resolve();
    },
    until: (count: number) =>
      seen.length >= count
        ? Promise.resolve()
        : new Promise<void>((resolve) => waiting.push({ count, resolve })),
  };
}

const rowOf = async (finality: Finality, jobId: string) => {
  const [row] = (await engineOf(finality).store.listEffects({ jobId })).items;
  if (row === undefined) throw new Error(`no outbox row for ${jobId}`);
  return row;
};

describe("effects handed over by the transaction that enqueued them", () => {
  it("a started dispatcher delivers each ingest's effect with no claim of its own", async () => {
    const delivered: string[] = [];
    const { finality } = ledger([{ name: "notify", handler: async (d) => void delivered.push(d.job.id) }]);
    const counted = countClaims(finality);
    const seen = attempts();
    // No tick after the first; pokes as `serve` wires them.
    const dispatcher = createDispatcher(finality, { pollIntervalMs: 3_600_000, onAttempt: seen.onAttempt });
    const unsubscribe = finality.onEffectsEnqueued(() => dispatcher.poke());
    dispatcher.start();
    try {
      await counted.started();
      const before = counted.claims;
      for (const [n, id] of ["a", "b", "c"].entries()) {
        await settle(finality, id);
        await seen.until(n + 1);
      }
      expect(counted.claims - before).toBe(0);
    } finally {
      unsubscribe();
      await dispatcher.stop();
    }
    expect(delivered).toEqual(["a", "b", "c"]);
    expect(seen.seen.map((a) => a.outcome)).toEqual(["delivered", "delivered", "delivered"]);
    for (const id of ["a", "b", "c"]) {
      const row = await rowOf(finality, id);
      expect({ status: row.status, attempts: row.attempts, leaseUntil: row.leaseUntil }).toEqual({
        status: "delivered",
        attempts: 1,
        leaseUntil: null,
      });
    }
  });

  it("`handoff: false` claims every effect itself, as before", async () => {
    const { finality } = ledger([{ name: "notify", handler: async () => {} }]);
    const counted = countClaims(finality);
    const seen = attempts();
    const dispatcher = createDispatcher(finality, {
      handoff: false,
      pollIntervalMs: 3_600_000,
      onAttempt: seen.onAttempt,
    });
    const unsubscribe = finality.onEffectsEnqueued(() => dispatcher.poke());
    dispatcher.start();
    try {
      await counted.started();
      const before = counted.claims;
      await settle(finality, "a");
      await seen.until(1);
      expect(counted.claims - before).toBe(1);
    } finally {
      unsubscribe();
      await dispatcher.stop();
    }
  });

  it("a transaction that rolls back hands nothing over and leaves no row", async () => {
    const delivered: string[] = [];
    const { finality } = ledger([
      { name: "notify", handler: async (d) => void delivered.push(d.job.id) },
      {
        name: "audit",
        transactional: async (job) => {
          if (job.id === "boom") throw new Error("audit refused");
        },
      },
    ]);
    const seen = attempts();
    const dispatcher = createDispatcher(finality, { concurrency: 1, onAttempt: seen.onAttempt });
    dispatcher.start();
    try {
      await expect(settle(finality, "boom")).rejects.toThrow("audit refused");
      expect((await engineOf(finality).store.listEffects({ jobId: "boom" })).items).toEqual([]);
      // The one slot is free: the next effect is handed over, not left pending.
      await settle(finality, "ok");
      await seen.until(1);
    } finally {
      await dispatcher.stop();
    }
    expect(delivered).toEqual(["ok"]);
    expect((await rowOf(finality, "ok")).attempts).toBe(1);
  });

  it("with no room the row is enqueued pending, and the slot that frees claims it", async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const delivered: string[] = [];
    const { finality } = ledger([
      {
        name: "notify",
        handler: async (d) => {
          if (d.job.id === "slow") await held;
          delivered.push(d.job.id);
        },
      },
    ]);
    const seen = attempts();
    // No tick and no pokes: only the handoff and the freed slot can start anything.
    const counted = countClaims(finality);
    const dispatcher = createDispatcher(finality, {
      concurrency: 1,
      pollIntervalMs: 3_600_000,
      timeoutMs: 60_000,
      onAttempt: seen.onAttempt,
    });
    dispatcher.start();
    try {
      await counted.started();
      await settle(finality, "slow");
      expect((await rowOf(finality, "slow")).status).toBe("delivering");
      await settle(finality, "next");
      expect((await rowOf(finality, "next")).status).toBe("pending");
      release();
      await seen.until(2);
    } finally {
      await dispatcher.stop();
    }
    expect(delivered).toEqual(["slow", "next"]);
    expect((await rowOf(finality, "next")).attempts).toBe(1);
  });

  it("a row handed to a process that died is claimed once its lease has run out", async () => {
    const { finality, clock, path } = ledger([{ name: "notify", handler: async () => {} }]);
    // Driven by runOnce: the handed effect waits for a run that never comes (the process dies).
    createDispatcher(finality, { handoff: true, leaseMs: 60_000 });
    await settle(finality, "lost");
    const leased = await rowOf(finality, "lost");
    expect(leased.status).toBe("delivering");
    expect(leased.leaseUntil).toBe(clock.now() + 60_000);
    await finality.close();
    open.splice(open.indexOf(finality), 1);

    const delivered: string[] = [];
    const after = ledger([{ name: "notify", handler: async (d) => void delivered.push(d.job.id) }], path);
    after.clock.set(clock.now());
    const dispatcher = createDispatcher(after.finality, { leaseMs: 60_000 });
    expect(await dispatcher.runOnce()).toBe(0);
    after.clock.advance(60_000);
    expect(await dispatcher.runOnce()).toBe(1);
    expect(delivered).toEqual(["lost"]);
    const row = await rowOf(after.finality, "lost");
    expect({ status: row.status, attempts: row.attempts }).toEqual({ status: "delivered", attempts: 2 });
  });

  it("a handed effect whose lease is mostly spent waits for it to run out, then is claimed", async () => {
    const delivered: string[] = [];
    const { finality, clock } = ledger([
      { name: "notify", handler: async (d) => void delivered.push(d.job.id) },
    ]);
    const dispatcher = createDispatcher(finality, { handoff: true, leaseMs: 60_000 });
    await settle(finality, "stale");
    // A run long after the commit: less lease left than a delivery's timeout (15 s).
    clock.advance(45_000);
    expect(await dispatcher.runOnce()).toBe(0);
    expect(delivered).toEqual([]);
    clock.advance(15_000);
    expect(await dispatcher.runOnce()).toBe(1);
    expect(delivered).toEqual(["stale"]);
    expect((await rowOf(finality, "stale")).attempts).toBe(2);
    // A fresh one is delivered by the next run, from the handoff (its first attempt).
    await settle(finality, "fresh");
    expect(await dispatcher.runOnce()).toBe(1);
    expect((await rowOf(finality, "fresh")).attempts).toBe(1);
  });

  it("an effect handed over after its dispatcher stopped is made due again at once", async () => {
    let openGate = () => {};
    const gate = new Promise<void>((resolve) => {
      openGate = resolve;
    });
    let entered = () => {};
    const inTransaction = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const delivered: string[] = [];
    const { finality } = ledger([
      { name: "notify", handler: async (d) => void delivered.push(d.job.id) },
      {
        name: "hold",
        transactional: async () => {
          entered();
          await gate;
        },
      },
    ]);
    const counted = countClaims(finality);
    // The give-back is the one finish: resolves once it has committed.
    const store = engineOf(finality).store;
    const finishEffect = store.finishEffect.bind(store);
    let finished = (_: Promise<boolean>) => {};
    const givenBack = new Promise<boolean>((resolve) => {
      finished = resolve;
    });
    store.finishEffect = (outcome) => {
      const done = finishEffect(outcome);
      finished(done);
      return done;
    };
    const dispatcher = createDispatcher(finality, { pollIntervalMs: 3_600_000 });
    dispatcher.start();
    // The first tick's claim has ended (stopping waits for a claim, which waits for the writer).
    await counted.started();
    // Claimed for the running dispatcher, committed once it has stopped.
    const settled = settle(finality, "late");
    await inTransaction;
    await dispatcher.stop();
    openGate();
    await settled;
    const next = createDispatcher(finality, { handoff: false });
    // Given back before the next run: due now, not when the lease runs out.
    expect(await givenBack).toBe(true);
    const given = await rowOf(finality, "late");
    expect(given.status).toBe("pending");
    expect(given.lastError).toContain("stopped before its first attempt");
    expect(given.nextAttemptAt).toBeLessThanOrEqual(engineOf(finality).clock.now());
    expect(await next.runOnce()).toBe(1);
    expect(delivered).toEqual(["late"]);
  });
});

// A handed effect's first attempt delivers the job its ingest wrote, without reading it from the
// store, where nothing after the effect's enqueue in that ingest writes the job. Where something
// may (parked observations applied after it, a transactional effect beside it), and for every
// later attempt, the job is read. Either way the settlement it carries is the one the store holds.
describe("the job a handed effect delivers", () => {
  /** Counts the store's `getJob` calls (ingest reads through its transaction, not this). */
  function countJobReads(finality: Finality) {
    const store = engineOf(finality).store;
    const getJob = store.getJob.bind(store);
    const counted = { reads: 0 };
    store.getJob = (key) => {
      counted.reads++;
      return getJob(key);
    };
    return counted;
  }

  /** Runs `work` with a started dispatcher (no ticks after the first), then stops it. */
  async function withDispatcher(
    finality: Finality,
    work: (seen: ReturnType<typeof attempts>) => Promise<void>,
  ) {
    const seen = attempts();
    const dispatcher = createDispatcher(finality, { pollIntervalMs: 3_600_000, onAttempt: seen.onAttempt });
    dispatcher.start();
    try {
      await work(seen);
    } finally {
      await dispatcher.stop();
    }
  }

  it("is the job its settling commit left, unread, for an adopted and for an updated job", async () => {
    const delivered: Job[] = [];
    const { finality } = ledger([{ name: "notify", handler: async (d) => void delivered.push(d.job) }]);
    const reads = countJobReads(finality);
    await withDispatcher(finality, async (seen) => {
      // Adopted settled, with a kind and a result.
      await finality.ingest({
        provider: "acme",
        id: "adopted",
        kind: "batch",
        state: "succeeded",
        source: "webhook",
        deliveryId: "d-1",
        seq: 4,
        result: { rows: [1, 2], note: "done" },
      });
      await seen.until(1);
      // Registered with metadata, moved on, then settled over it with an error.
      await finality.register({ provider: "acme", id: "updated", kind: "video", metadata: { user: "u1" } });
      await finality.ingest({
        provider: "acme",
        id: "updated",
        state: "running",
        source: "webhook",
        deliveryId: "d-2",
      });
      await finality.ingest({
        provider: "acme",
        id: "updated",
        state: "failed",
        source: "webhook",
        deliveryId: "d-3",
        updateTime: 1_700_000_000_000,
        error: { code: "E_QUOTA", message: "over quota" },
      });
      await seen.until(2);
    });
    expect(reads.reads).toBe(0);
    const store = engineOf(finality).store;
    expect(delivered).toEqual([
      await store.getJob({ provider: "acme", id: "adopted" }),
      await store.getJob({ provider: "acme", id: "updated" }),
    ]);
    expect(delivered.map((job) => [job.state, job.settledAt !== null])).toEqual([
      ["succeeded", true],
      ["failed", true],
    ]);
  });

  it("is read again for a retry", async () => {
    const delivered: Job[] = [];
    const { finality, clock } = ledger([
      {
        name: "notify",
        handler: async (d) => {
          delivered.push(d.job);
          if (d.attempt === 1) throw new Error("receiver down");
        },
      },
    ]);
    const reads = countJobReads(finality);
    await withDispatcher(finality, async (seen) => {
      await settle(finality, "a");
      await seen.until(1);
    });
    expect(reads.reads).toBe(0);
    // A later webhook flags the settled job (another terminal state): the retry sends it so.
    await finality.ingest({
      provider: "acme",
      id: "a",
      state: "failed",
      source: "webhook",
      deliveryId: "d-a2",
    });
    clock.advance(60_000);
    expect(await createDispatcher(finality).runOnce()).toBe(1);
    expect(reads.reads).toBe(1);
    expect(delivered.map((job) => job.conflict)).toEqual([false, true]);
    expect(delivered[1]).toEqual(await engineOf(finality).store.getJob({ provider: "acme", id: "a" }));
  });

  it("is the ingest's own when a webhook for the same job shares its group commit", async () => {
    const delivered: Job[] = [];
    const { finality } = ledger([
      { name: "notify", on: ["succeeded"], handler: async (d) => void delivered.push(d.job) },
    ]);
    const reads = countJobReads(finality);
    await withDispatcher(finality, async (seen) => {
      // Called in one turn: one group, one commit. The second flags the job the first settled.
      await Promise.all([
        finality.ingest({
          provider: "acme",
          id: "a",
          state: "succeeded",
          source: "webhook",
          deliveryId: "d-s",
        }),
        finality.ingest({ provider: "acme", id: "a", state: "failed", source: "webhook", deliveryId: "d-f" }),
      ]);
      await seen.until(1);
    });
    expect(reads.reads).toBe(0);
    const stored = await engineOf(finality).store.getJob({ provider: "acme", id: "a" });
    expect(stored?.conflict).toBe(true);
    // The settlement is the stored one; the flag the batch-mate set shows from the next attempt.
    const settlement = (job: Job | null | undefined) => [job?.state, job?.settledAt, job?.settledBy];
    expect(settlement(delivered[0])).toEqual(settlement(stored));
    expect(delivered[0]?.version).toBeLessThanOrEqual(stored?.version ?? 0);
  });

  it("is a copy of its own for each handler: what one changes, nothing else sees", async () => {
    const seenBy: Record<string, unknown> = {};
    const { finality } = ledger([
      {
        name: "mutates",
        handler: async (d) => {
          (d.job as { state: string }).state = "mutated";
          (d.job.result as { rows: number[] }).rows.push(99);
        },
      },
      {
        name: "reads",
        handler: async (d) => {
          seenBy.reads = structuredClone(d.job);
        },
      },
    ]);
    let outcomeJob: Job | null = null;
    await withDispatcher(finality, async (seen) => {
      const outcome = await finality.ingest({
        provider: "acme",
        id: "a",
        state: "succeeded",
        source: "webhook",
        deliveryId: "d-1",
        result: { rows: [1] },
      });
      outcomeJob = outcome.job;
      await seen.until(2);
    });
    const stored = await engineOf(finality).store.getJob({ provider: "acme", id: "a" });
    expect(seenBy.reads).toEqual(stored);
    expect(outcomeJob).toEqual(stored);
  });

  it("is read when a transactional effect ran beside it in the transaction", async () => {
    const delivered: Job[] = [];
    const { finality } = ledger([
      { name: "notify", handler: async (d) => void delivered.push(d.job) },
      { name: "audit", transactional: async () => {} },
    ]);
    const reads = countJobReads(finality);
    await withDispatcher(finality, async (seen) => {
      await settle(finality, "a");
      await seen.until(1);
    });
    expect(reads.reads).toBe(1);
    expect(delivered).toEqual([await engineOf(finality).store.getJob({ provider: "acme", id: "a" })]);
  });

  it("is read when observations parked for an adopted job are applied after its effects", async () => {
    const dir = tempDir();
    dirs.push(dir);
    const file = dir.file("parked.db");
    // Parked while the provider took registered jobs only.
    const first = ledger([], file, "registered-only");
    await first.finality.ingest({
      provider: "acme",
      id: "a",
      state: "succeeded",
      source: "webhook",
      deliveryId: "d-p",
    });
    await first.finality.close();
    open.splice(open.indexOf(first.finality), 1);
    // Adopted now by another terminal webhook: its effect fires, then the parked success flags it.
    const delivered: Job[] = [];
    const { finality } = ledger([{ name: "notify", handler: async (d) => void delivered.push(d.job) }], file);
    const reads = countJobReads(finality);
    await withDispatcher(finality, async (seen) => {
      await finality.ingest({
        provider: "acme",
        id: "a",
        state: "failed",
        source: "webhook",
        deliveryId: "d-f",
      });
      await seen.until(1);
    });
    expect(reads.reads).toBe(1);
    const stored = await engineOf(finality).store.getJob({ provider: "acme", id: "a" });
    expect(stored?.conflict).toBe(true);
    expect(delivered).toEqual([stored]);
  });
});
