import { afterEach, describe, expect, it } from "vitest";
import { manualClock } from "../../src/core/clock.js";
import { createFinality } from "../../src/engine/create-finality.js";
import { createDispatcher, DeliveryError } from "../../src/engine/dispatcher.js";
import { retryEffect } from "../../src/engine/effect-admin.js";
import type { EffectDelivery } from "../../src/engine/effect-definitions.js";
import type { Finality } from "../../src/engine/finality.js";
import { engineOf } from "../helpers/engine.js";
import { tempDir } from "../helpers/temp-dir.js";

const dirs: { cleanup(): void }[] = [];
const open: Finality[] = [];
afterEach(async () => {
  for (const f of open.splice(0)) await f.close();
  for (const d of dirs.splice(0)) d.cleanup();
});

function setup(handler: (d: EffectDelivery) => Promise<void>) {
  const dir = tempDir();
  dirs.push(dir);
  const clock = manualClock();
  const finality = createFinality({
    store: { sqlite: dir.file("ledger.db") },
    clock,
    effects: [{ name: "notify", handler }],
  });
  open.push(finality);
  return { finality, clock, file: dir.file("ledger.db") };
}

async function settle(finality: Finality, id: string) {
  await finality.ingest({
    provider: "acme",
    id,
    state: "succeeded",
    source: "webhook",
    deliveryId: `d-${id}`,
  });
}

describe("dispatcher", () => {
  it("retries a failing receiver with growing gaps and the same key, then delivers once", async () => {
    const seen: { attempt: number; key: string; at: number }[] = [];
    let failures = 3;
    const { finality, clock } = setup(async (d) => {
      seen.push({ attempt: d.attempt, key: d.idempotencyKey, at: clock.now() });
      if (failures-- > 0) throw new Error("receiver down");
    });
    const dispatcher = createDispatcher(finality, { random: () => 0.5 });
    await settle(finality, "j1");
    const nextAttempts: number[] = [];
    for (let i = 0; i < 4; i++) {
      expect(await dispatcher.runOnce()).toBe(1);
      const [effect] = (await engineOf(finality).store.listEffects({ jobId: "j1" })).items;
      if (!effect) throw new Error("no effect row");
      if (i < 3) {
        expect(effect.status).toBe("pending");
        expect(effect.lastError).toContain("receiver down");
        nextAttempts.push(effect.nextAttemptAt - clock.now());
        // Not due yet: nothing is claimed before the backoff passes.
        expect(await dispatcher.runOnce()).toBe(0);
        clock.set(effect.nextAttemptAt);
      } else {
        expect(effect.status).toBe("delivered");
      }
    }
    expect(seen.map((s) => s.attempt)).toEqual([1, 2, 3, 4]);
    expect(new Set(seen.map((s) => s.key)).size).toBe(1);
    expect(nextAttempts[0]).toBe(5_000);
    expect(nextAttempts[1]).toBeGreaterThan(nextAttempts[0] as number);
    expect(nextAttempts[2]).toBeGreaterThan(nextAttempts[1] as number);
  });

  it("moves an always-failing effect to dead, and a retry via the API delivers it once the receiver recovers", async () => {
    let up = false;
    let delivered = 0;
    const { finality, clock } = setup(async () => {
      if (!up) throw new Error("still down");
      delivered++;
    });
    const dispatcher = createDispatcher(finality, { retry: { maxAttempts: 3 }, random: () => 0 });
    await settle(finality, "j2");
    for (let i = 0; i < 3; i++) {
      await dispatcher.runOnce();
      clock.advance(3_600_000);
    }
    const [dead] = (await engineOf(finality).store.listEffects({ jobId: "j2" })).items;
    expect(dead?.status).toBe("dead");
    expect(dead?.attempts).toBe(3);
    expect(dead?.lastError).toContain("still down");
    expect(await dispatcher.runOnce()).toBe(0);

    up = true;
    await retryEffect(finality, dead?.id as string);
    expect(await dispatcher.runOnce()).toBe(1);
    const [after] = (await engineOf(finality).store.listEffects({ jobId: "j2" })).items;
    expect(after?.status).toBe("delivered");
    expect(delivered).toBe(1);
    const events = await finality.jobEvents({ provider: "acme", id: "j2" });
    expect(events.some((e) => (e.detail as { action?: string } | null)?.action === "effect-retry")).toBe(
      true,
    );
  });

  it("gives a retried or replayed effect a fresh budget: one more failure is retried, not dead", async () => {
    let up = false;
    const { finality, clock } = setup(async () => {
      if (!up) throw new Error("still down");
    });
    const dispatcher = createDispatcher(finality, { retry: { maxAttempts: 2 }, random: () => 0 });
    await settle(finality, "j4");
    for (let i = 0; i < 2; i++) {
      await dispatcher.runOnce();
      clock.advance(3_600_000);
    }
    const [dead] = (await engineOf(finality).store.listEffects({ jobId: "j4" })).items;
    expect(dead).toMatchObject({ status: "dead", attempts: 2 });

    // Re-armed four days after it was created (past the default 3-day maximum age, too).
    clock.advance(4 * 86_400_000);
    const rearmed = await retryEffect(finality, dead?.id as string);
    expect(rearmed).toMatchObject({ status: "pending", attempts: 0, createdAt: clock.now() });
    await dispatcher.runOnce();
    const [failedOnce] = (await engineOf(finality).store.listEffects({ jobId: "j4" })).items;
    expect(failedOnce).toMatchObject({ status: "pending", attempts: 1, nextAttemptAt: clock.now() + 4_000 });

    up = true;
    clock.advance(4_000);
    expect(await dispatcher.runOnce()).toBe(1);
    expect((await engineOf(finality).store.listEffects({ jobId: "j4" })).items[0]).toMatchObject({
      status: "delivered",
    });
    const retried = (await finality.jobEvents({ provider: "acme", id: "j4" })).find(
      (e) => (e.detail as { action?: string } | null)?.action === "effect-retry",
    );
    expect(retried?.detail).toMatchObject({ previousStatus: "dead", previousAttempts: 2 });
  });

  it("counts a plain function handler (no promise, as from JavaScript) that returns as delivered", async () => {
    let calls = 0;
    const plain = (() => {
      calls++;
    }) as unknown as (d: EffectDelivery) => Promise<void>;
    const { finality } = setup(plain);
    await settle(finality, "j5");
    expect(await createDispatcher(finality).runOnce()).toBe(1);
    expect(calls).toBe(1);
    expect((await engineOf(finality).store.listEffects({ jobId: "j5" })).items[0]).toMatchObject({
      status: "delivered",
    });
  });

  it("honours the receiver's Retry-After", async () => {
    const { finality, clock } = setup(async () => {
      throw new DeliveryError("busy", 7_200_000);
    });
    await settle(finality, "j3");
    await createDispatcher(finality, { random: () => 0 }).runOnce();
    const [effect] = (await engineOf(finality).store.listEffects({ jobId: "j3" })).items;
    expect(effect?.nextAttemptAt).toBe(clock.now() + 7_200_000);
  });

  it("gives up after the maximum age (3 days by default)", async () => {
    const { finality, clock } = setup(async () => {
      throw new Error("never");
    });
    const dispatcher = createDispatcher(finality, { random: () => 0.5 });
    await settle(finality, "j4");
    let rounds = 0;
    for (;;) {
      await dispatcher.runOnce();
      const [effect] = (await engineOf(finality).store.listEffects({ jobId: "j4" })).items;
      if (effect?.status === "dead") break;
      clock.set(effect?.nextAttemptAt as number);
      rounds++;
      expect(rounds).toBeLessThan(200);
    }
    const [effect] = (await engineOf(finality).store.listEffects({ jobId: "j4" })).items;
    expect(clock.now() - (effect?.createdAt as number)).toBeLessThanOrEqual(3 * 24 * 3_600_000);
    expect(effect?.attempts).toBeGreaterThan(70);
  });

  it("a crashed dispatcher's claim comes back after its lease, and its late finish is refused", async () => {
    let delivered = 0;
    const { finality, clock } = setup(async () => {
      delivered++;
    });
    await settle(finality, "j5");
    // A dispatcher claims the row, then dies before delivering.
    const [claimed] = await engineOf(finality).store.claimEffects(clock.now(), 10, 60_000);
    expect(claimed?.status).toBe("delivering");
    const dispatcher = createDispatcher(finality, { leaseMs: 60_000 });
    expect(await dispatcher.runOnce()).toBe(0);
    clock.advance(60_001);
    expect(await dispatcher.runOnce()).toBe(1);
    expect(delivered).toBe(1);
    const late = await engineOf(finality).store.finishEffect({
      id: claimed?.id as string,
      claimedUntil: claimed?.leaseUntil as number,
      kind: "retry",
      at: clock.now(),
      nextAttemptAt: clock.now(),
      error: "late",
    });
    expect(late).toBe(false);
    const [effect] = (await engineOf(finality).store.listEffects({ jobId: "j5" })).items;
    expect(effect?.status).toBe("delivered");
    expect(effect?.attempts).toBe(2);
  });

  it("times out a handler that never answers", async () => {
    const { finality } = setup(() => new Promise<void>(() => {}));
    await settle(finality, "j6");
    await createDispatcher(finality, { timeoutMs: 50 }).runOnce();
    const [effect] = (await engineOf(finality).store.listEffects({ jobId: "j6" })).items;
    expect(effect?.status).toBe("pending");
    expect(effect?.lastError).toContain("timed out");
  });

  it("runOnce: a hanging delivery holds its own slot only; what is due behind it or enqueued meanwhile goes out", async () => {
    // The Workers alarm's run: it used to claim in batches and wait for each batch's slowest
    // delivery, so effects due behind a hanging one (the next batch, or enqueued meanwhile)
    // waited for its timeout (the next alarm cannot start while this one runs).
    let release = () => {};
    const hanging = new Promise<void>((resolve) => {
      release = resolve;
    });
    const delivered: string[] = [];
    const waiters: { count: number; resolve: () => void }[] = [];
    const deliveredCount = (count: number) =>
      new Promise<void>((resolve) => {
        if (delivered.length >= count) resolve();
        else waiters.push({ count, resolve });
      });
    const { finality, clock } = setup(async (d) => {
      if (d.job.id === "slow") return hanging;
      delivered.push(d.job.id);
      for (const w of waiters) if (delivered.length >= w.count) w.resolve();
    });
    // A timeout past this test's own: the hanging delivery ends only when released.
    const dispatcher = createDispatcher(finality, { concurrency: 2, timeoutMs: 120_000 });
    // Due one after another (claimed oldest first): the hanging one is in the first claim.
    for (const id of ["slow", "due-0", "due-1"]) {
      await settle(finality, id);
      clock.advance(1);
    }
    const run = dispatcher.runOnce();
    await deliveredCount(2);
    // Enqueued while the hanging delivery is still in flight.
    await settle(finality, "meanwhile-0");
    await settle(finality, "meanwhile-1");
    await deliveredCount(4);
    expect(delivered).toEqual(["due-0", "due-1", "meanwhile-0", "meanwhile-1"]);
    release();
    expect(await run).toBe(5);
  }, 10_000);

  it("claims again after a delivery only when its last claim filled every free slot: one claim a delivery, not two", async () => {
    const delivered: string[] = [];
    const { finality } = setup(async (d) => {
      delivered.push(d.job.id);
    });
    // Every claim counted, and a way to wait until none is running.
    const store = engineOf(finality).store;
    const claimEffects = store.claimEffects.bind(store);
    let claims = 0;
    let running = 0;
    const idle: (() => void)[] = [];
    store.claimEffects = async (...args) => {
      claims++;
      running++;
      try {
        return await claimEffects(...args);
      } finally {
        if (--running === 0) for (const resolve of idle.splice(0)) resolve();
      }
    };
    const attempts: string[] = [];
    let attempted = () => {};
    // No tick after the first: only pokes and deliveries' ends claim. Claimed by the dispatcher,
    // not handed over by the ingest's transaction (effect-handoff.test.ts).
    const dispatcher = createDispatcher(finality, {
      handoff: false,
      concurrency: 2,
      pollIntervalMs: 3_600_000,
      onAttempt: (attempt) => {
        attempts.push(attempt.effect.jobId);
        attempted();
      },
    });
    /** Until `count` deliveries are recorded, their ends have run (a turn later) and no claim runs. */
    const quiet = async (count: number) => {
      if (attempts.length < count)
        await new Promise<void>((resolve) => (attempted = () => attempts.length >= count && resolve()));
      await new Promise((resolve) => setImmediate(resolve));
      if (running > 0) await new Promise<void>((resolve) => idle.push(resolve));
    };
    const unsubscribe = finality.onEffectsEnqueued(() => dispatcher.poke());
    dispatcher.start();
    try {
      await quiet(0);
      // One at a time: each poke claims it (one row, two slots free); its delivery's end finds no
      // backlog and claims nothing.
      const before = claims;
      for (const [n, id] of ["a", "b", "c"].entries()) {
        await settle(finality, id);
        await quiet(n + 1);
      }
      expect(claims - before).toBe(3);
      // Three due at once with two slots: the claim fills both, so a delivery's end claims the
      // third (no tick would have).
      unsubscribe();
      for (const id of ["d", "e", "f"]) await settle(finality, id);
      dispatcher.poke();
      await quiet(6);
    } finally {
      unsubscribe();
      await dispatcher.stop();
    }
    expect(delivered.slice(0, 3)).toEqual(["a", "b", "c"]);
    expect(delivered.slice(3).sort()).toEqual(["d", "e", "f"]);
  }, 10_000);
});
