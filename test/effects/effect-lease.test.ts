import { once } from "node:events";
import { setTimeout as delay } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/parse-config.js";
import { systemClock } from "../../src/core/clock.js";
import { isFinalityError } from "../../src/core/errors.js";
import type { JobKey } from "../../src/core/model.js";
import { createFinality } from "../../src/engine/create-finality.js";
import { createDispatcher, type DeliveryAttempt, DeliveryError } from "../../src/engine/dispatcher.js";
import type { EffectDelivery } from "../../src/engine/effect-definitions.js";
import { holdEffectLease } from "../../src/engine/effect-lease.js";
import { type Finality, finalityOn } from "../../src/engine/finality.js";
import type { Store } from "../../src/store/store.js";
import { countAbortControllers } from "../helpers/abort-controllers.js";
import { engineOf } from "../helpers/engine.js";
import { tempDir } from "../helpers/temp-dir.js";

const dirs: { cleanup(): void }[] = [];
const open: Finality[] = [];
afterEach(async () => {
  for (const f of open.splice(0)) await f.close();
  for (const d of dirs.splice(0)) d.cleanup();
});

type Handler = (delivery: EffectDelivery, signal: AbortSignal) => Promise<void>;

/** A ledger on a fresh SQLite file, on the system clock (leases and timers agree). */
function ledger(handler: Handler): Finality {
  const dir = tempDir();
  dirs.push(dir);
  const finality = createFinality({
    store: { sqlite: dir.file("ledger.db") },
    effects: [{ name: "notify", handler }],
  });
  open.push(finality);
  return finality;
}

async function settle(finality: Finality, id: string): Promise<void> {
  await finality.ingest({
    provider: "acme",
    id,
    state: "succeeded",
    source: "webhook",
    deliveryId: `d-${id}`,
  });
}

/** A promise and the function that resolves it. */
function gate(): { opened: Promise<void>; open(): void } {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

describe("effect delivery leases", () => {
  it("a delivery in flight renews its lease: no other dispatcher can claim it, however long it takes", async () => {
    const finality = ledger(async () => {});
    await settle(finality, "j1");
    const store = engineOf(finality).store;
    const LEASE_MS = 600;
    const claimedAt = Date.now();
    const [effect] = await store.claimEffects(claimedAt, 1, LEASE_MS);
    if (!effect) throw new Error("nothing claimed");
    // Only the renewal keeps the row from a rival.
    const lease = holdEffectLease({ store, clock: systemClock, effect, claimedAt, leaseMs: LEASE_MS });
    // A rival dispatcher polls for due rows throughout four lease lengths.
    const until = claimedAt + 4 * LEASE_MS;
    let stolen = 0;
    while (Date.now() < until) {
      stolen += (await store.claimEffects(Date.now(), 1, LEASE_MS)).length;
      await delay(50);
    }
    expect(stolen).toBe(0);
    expect(lease.signal.aborted).toBe(false);
    const heldUntil = await lease.release();
    expect(heldUntil).toBeGreaterThanOrEqual(until);
    expect((await store.getEffect(effect.id))?.leaseUntil).toBe(heldUntil);
    // The claim to finish with is the renewed one.
    expect(
      await store.finishEffect({
        id: effect.id,
        claimedUntil: heldUntil as number,
        kind: "delivered",
        at: Date.now(),
      }),
    ).toBe(true);
  });

  it("a healthy, slow receiver behind a slow store is delivered once, never beside a rival dispatcher", async () => {
    const dir = tempDir();
    dirs.push(dir);
    let inFlight = 0;
    let mostAtOnce = 0;
    let calls = 0;
    const slowReceiver = async () => {
      calls++;
      mostAtOnce = Math.max(mostAtOnce, ++inFlight);
      // Within its timeout, but loading the job and delivering together outlast the lease.
      await delay(450);
      inFlight--;
    };
    const finality = createFinality({
      store: { sqlite: dir.file("ledger.db") },
      effects: [{ name: "notify", handler: slowReceiver }],
    });
    open.push(finality);
    const inner = engineOf(finality).store;
    const slowReads: Store = {
      ...inner,
      async getJob(key: JobKey) {
        await delay(300);
        return inner.getJob(key);
      },
    };
    const slow = finalityOn({ store: slowReads, effects: engineOf(finality).effects });
    await settle(finality, "j-slow");
    const options = { timeoutMs: 600, leaseMs: 650 };
    const running = createDispatcher(slow, options).runOnce();
    // A rival replica looks for due rows the whole time.
    const rival = createDispatcher(finality, options);
    let settled = false;
    void running.finally(() => {
      settled = true;
    });
    let rivalClaims = 0;
    while (!settled) {
      rivalClaims += await rival.runOnce();
      await delay(25);
    }
    expect(await running).toBe(1);
    expect({ calls, mostAtOnce, rivalClaims }).toEqual({ calls: 1, mostAtOnce: 1, rivalClaims: 0 });
    expect((await engineOf(finality).store.listEffects({ jobId: "j-slow" })).items[0]).toMatchObject({
      status: "delivered",
      attempts: 1,
    });
  });

  it("a delivery whose claim another dispatcher took over is stopped, and its outcome is not recorded", async () => {
    let reason = "";
    const finality: Finality = ledger(async (_delivery, signal) => {
      // Another dispatcher, its clock far ahead, takes the row over while this one delivers.
      const [rival] = await engineOf(finality).store.claimEffects(Date.now() + 600_000, 1, 60_000);
      expect(rival?.attempts).toBe(2);
      await once(signal, "abort");
      reason = (signal.reason as Error).message;
      throw signal.reason;
    });
    await settle(finality, "j2");
    const attempts: DeliveryAttempt[] = [];
    await createDispatcher(finality, {
      timeoutMs: 1_000,
      leaseMs: 1_200,
      onAttempt: (a) => attempts.push(a),
    }).runOnce();
    expect(reason).toContain("another dispatcher took over");
    expect(attempts.map((a) => a.outcome)).toEqual(["lost-claim"]);
    // The rival's claim stands untouched.
    const [row] = (await engineOf(finality).store.listEffects({ jobId: "j2" })).items;
    expect(row).toMatchObject({ status: "delivering", attempts: 2, lastError: null });
  });

  it("the lease covers the whole attempt: a store too starved to load the job in time does not deliver it beside another replica", async () => {
    const delivered: string[] = [];
    const dir = tempDir();
    dirs.push(dir);
    const replicaB = createFinality({
      store: { sqlite: dir.file("ledger.db") },
      effects: [{ name: "notify", handler: async () => void delivered.push("B") }],
    });
    open.push(replicaB);
    // Replica A shares the database, but its pool is starved once it has claimed: every read,
    // renewal and finish waits.
    const starvation = gate();
    const inner = engineOf(replicaB).store;
    const starved: Store = {
      ...inner,
      async getJob(key: JobKey) {
        await starvation.opened;
        return inner.getJob(key);
      },
      async extendEffectLease(id: string, claimedUntil: number, leaseUntil: number) {
        await starvation.opened;
        return inner.extendEffectLease(id, claimedUntil, leaseUntil);
      },
      async finishEffect(outcome) {
        await starvation.opened;
        return inner.finishEffect(outcome);
      },
    };
    const replicaA = finalityOn({
      store: starved,
      effects: [{ name: "notify", handler: async () => void delivered.push("A") }],
    });
    await settle(replicaB, "j3");
    const attemptsA: DeliveryAttempt[] = [];
    const options = { timeoutMs: 200, leaseMs: 400 };
    const runA = createDispatcher(replicaA, { ...options, onAttempt: (a) => attemptsA.push(a) }).runOnce();
    // A has claimed and is waiting on its store; B takes the row once A's lease has run out.
    const dispatcherB = createDispatcher(replicaB, options);
    const claimedAt = Date.now();
    while ((await dispatcherB.runOnce()) === 0) await delay(20);
    expect(Date.now() - claimedAt).toBeGreaterThanOrEqual(options.leaseMs - 50);
    expect(delivered).toEqual(["B"]);
    // A's store answers at last: A stopped its attempt before its lease ran out, so it sends nothing.
    starvation.open();
    expect(await runA).toBe(1);
    expect(delivered).toEqual(["B"]);
    expect(attemptsA).toMatchObject([
      { outcome: "lost-claim", error: expect.stringContaining("lease was about to run out") },
    ]);
    const [row] = (await engineOf(replicaB).store.listEffects({ jobId: "j3" })).items;
    expect(row).toMatchObject({ status: "delivered", attempts: 2 });
  });
});

describe("a held lease's stop", () => {
  /** A lease on a store whose renewals always hold (nothing here runs long enough to renew). */
  function held(leaseLeftMs = 60_000): ReturnType<typeof holdEffectLease> {
    const store = { extendEffectLease: async () => true };
    const claimedAt = Date.now();
    return holdEffectLease({
      store,
      clock: systemClock,
      effect: { id: "e1", leaseUntil: claimedAt + leaseLeftMs },
      claimedAt,
      leaseMs: 60_000,
    });
  }

  it("race answers work that ignores the stop with the stop's reason, and the signal carries the same", async () => {
    const lease = held();
    const signal = lease.within(20);
    const error = await lease.race(new Promise<never>(() => {})).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeliveryError);
    expect((error as Error).message).toBe("delivery timed out");
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(error);
    expect(await lease.release()).toBeGreaterThan(0);
  });

  it("work that honours the signal fails with its own message, not the lease's", async () => {
    const lease = held();
    const signal = lease.within(20);
    const honouring = new Promise<never>((_, reject) =>
      signal.addEventListener("abort", () =>
        reject(new DeliveryError("POST http://r:1 failed: timed out after 20 ms")),
      ),
    );
    await expect(lease.race(honouring)).rejects.toThrow("POST http://r:1 failed");
    await lease.release();
  });

  it("a signal first read after the stop is already aborted, and a race begun then is answered", async () => {
    // A claim read with its lease all but run out: the guard stops the attempt at once.
    const lease = held(10);
    await delay(20);
    expect(lease.signal.aborted).toBe(true);
    expect((lease.signal.reason as Error).message).toContain("lease was about to run out");
    await expect(lease.race(new Promise<never>(() => {}))).rejects.toThrow("lease was about to run out");
    await lease.release();
  });

  it("stopAfter: the stop's listener hears the timeout once, its reason is the race's, and no AbortSignal is made", async () => {
    const made = countAbortControllers();
    try {
      const lease = held();
      const stop = lease.stopAfter(20);
      expect(stop.reason).toBeNull();
      const heard: DeliveryError[] = [];
      stop.onStop((reason) => heard.push(reason));
      const removed: DeliveryError[] = [];
      stop.onStop((reason) => removed.push(reason))();
      const error = await lease.race(new Promise<never>(() => {})).catch((e: unknown) => e);
      expect((error as Error).message).toBe("delivery timed out");
      expect(heard).toEqual([error]);
      expect(removed).toEqual([]);
      expect(stop.reason).toBe(error);
      // Added after the stop: never called (the reason is there to read).
      const late: DeliveryError[] = [];
      stop.onStop((reason) => late.push(reason));
      await delay(5);
      expect(late).toEqual([]);
      await lease.release();
      expect(made()).toBe(0);
      // Read from the stop, the signal is made, already aborted with the same reason.
      expect(stop.signal.aborted).toBe(true);
      expect(stop.signal.reason).toBe(error);
      expect(made()).toBe(1);
    } finally {
      made.restore();
    }
  });
});

describe("effect lease settings", () => {
  it("createDispatcher refuses a lease that is not longer than the delivery timeout", () => {
    const finality = ledger(async () => {});
    for (const leaseMs of [1_000, 5_000]) {
      let error: unknown;
      try {
        createDispatcher(finality, { timeoutMs: 5_000, leaseMs });
      } catch (caught) {
        error = caught;
      }
      expect(isFinalityError(error, "invalid-config")).toBe(true);
      expect((error as Error).message).toMatch(
        /lease \(\d+ ms\) must be longer than the delivery timeout \(5000 ms\)/,
      );
    }
    // The default lease (timeout × 4) and a longer one are accepted.
    expect(() => createDispatcher(finality, { timeoutMs: 5_000 })).not.toThrow();
    expect(() => createDispatcher(finality, { timeoutMs: 5_000, leaseMs: 5_001 })).not.toThrow();
  });

  it("the configuration refuses effectDelivery.leaseSeconds at or below timeoutSeconds, naming the field", () => {
    for (const leaseSeconds of [3, 15]) {
      expect(() => parseConfig({ effectDelivery: { timeoutSeconds: 15, leaseSeconds } }, {})).toThrow(
        /effectDelivery\.leaseSeconds.*must be longer than effectDelivery\.timeoutSeconds \(15 s\)/,
      );
    }
    expect(
      parseConfig({ effectDelivery: { timeoutSeconds: 15, leaseSeconds: 16 } }, {}).effectDelivery,
    ).toMatchObject({
      leaseSeconds: 16,
    });
    expect(
      parseConfig({ effectDelivery: { timeoutSeconds: 15 } }, {}).effectDelivery.leaseSeconds,
    ).toBeUndefined();
  });
});
