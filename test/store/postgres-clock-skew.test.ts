import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/parse-config.js";
import { type Clock, manualClock } from "../../src/core/clock.js";
import { createFinality } from "../../src/engine/create-finality.js";
import { createDispatcher } from "../../src/engine/dispatcher.js";
import type { EffectDelivery } from "../../src/engine/effect-definitions.js";
import type { Finality } from "../../src/engine/finality.js";
import { finalityFromConfig } from "../../src/host/node/finality-from-config.js";
import { createRunService, type RunService } from "../../src/runs/run-service.js";
import { openPostgresStore, type PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { engineOf } from "../helpers/engine.js";
import { dropSchema, POSTGRES_TEST_URL, postgresSuite, uniqueSchemaName } from "../helpers/postgres.js";

// Several `finality serve` replicas on one PostgreSQL, one of them on a machine whose clock is
// ten minutes ahead: none of them may take what another holds before its lease has run out.
const { admin } = await postgresSuite("PostgreSQL clock skew between replicas");

const AHEAD_MS = 10 * 60_000;
/** What "the same time" means across two replicas: both read the database's clock, each with a round trip of error. */
const AGREE_WITHIN_MS = 250;

interface Replica {
  name: string;
  store: PostgresStore;
  finality: Finality;
  runs: RunService;
}

describe("replicas whose machines' clocks disagree, on one PostgreSQL", () => {
  let schema = "";
  const opened: Replica[] = [];
  /** Effect deliveries, in order, by replica name. */
  let deliveries: string[] = [];
  /** A delivery on replica `right` waits for this, so that its lease is held while the other looks. */
  let releaseDelivery: () => void = () => {};
  let deliveryStarted: Promise<void> = Promise.resolve();

  beforeEach(() => {
    schema = uniqueSchemaName("finality_skew");
    deliveries = [];
    let started: () => void = () => {};
    deliveryStarted = new Promise((resolve) => {
      started = resolve;
    });
    const held = new Promise<void>((resolve) => {
      releaseDelivery = resolve;
    });
    handlers.right = async () => {
      started();
      await held;
    };
  });
  afterEach(async () => {
    releaseDelivery();
    for (const replica of opened.splice(0)) {
      replica.runs.close();
      await replica.finality.close();
    }
    await dropSchema(admin, schema);
  });

  const handlers: Record<string, () => Promise<void>> = {};

  /** One replica as `finality serve` builds it: the ledger's clock is the store's. */
  async function replica(name: string, machineClock?: Clock): Promise<Replica> {
    const store = await openPostgresStore({
      url: POSTGRES_TEST_URL,
      schema,
      max: 4,
      ...(machineClock ? { localClock: machineClock } : {}),
    });
    const finality = createFinality({
      store,
      // A registered job is due for its first poll at once.
      graceSeconds: 0,
      effects: [
        {
          name: "notify",
          on: ["succeeded"],
          handler: async (_delivery: EffectDelivery) => {
            deliveries.push(name);
            await handlers[name]?.();
          },
        },
      ],
    });
    const made = { name, store, finality, runs: createRunService({ finality }) };
    opened.push(made);
    return made;
  }

  const ahead: Clock = { now: () => Date.now() + AHEAD_MS };

  it("count time by the database's clock: the replica ten minutes ahead reads the same time as the right one", async () => {
    const right = await replica("right");
    const wrong = await replica("wrong", ahead);
    expect(
      Math.abs(engineOf(wrong.finality).clock.now() - engineOf(right.finality).clock.now()),
    ).toBeLessThan(AGREE_WITHIN_MS);
    // The database runs on this machine: the right replica's offset is about nothing, the other's
    // is the ten minutes it is ahead, taken back.
    expect(Math.abs(right.store.clock.offsetMs() ?? Number.NaN)).toBeLessThan(AGREE_WITHIN_MS);
    expect(Math.abs((wrong.store.clock.offsetMs() ?? Number.NaN) + AHEAD_MS)).toBeLessThan(AGREE_WITHIN_MS);
  });

  it("a run lease taken through one replica is not expired early by the replica whose clock is ahead", async () => {
    const right = await replica("right");
    const wrong = await replica("wrong", ahead);
    const { run } = await right.runs.enqueue({ kind: "render" });
    const claimed = await right.runs.claim({ workerId: "w1", leaseSeconds: 30 });
    expect(claimed?.run.id).toBe(run.id);
    const attempt = claimed?.attempt;
    if (!attempt) throw new Error("nothing was claimed");

    // The other replica sweeps: ten minutes ahead, its own clock says the lease ran out long ago.
    const counts = await wrong.runs.sweepOnce();
    expect(Object.entries(counts).filter(([, n]) => n > 0)).toEqual([]);
    // And the worker's heartbeat, sent through that replica by the load balancer, still holds.
    const beat = await wrong.runs.heartbeat(attempt.id, { generation: attempt.generation });
    expect(beat.attempt.status).toBe("starting");
    expect(beat.attempt.leaseExpiresAt).toBeLessThan(
      engineOf(right.finality).clock.now() + 30_000 + AGREE_WITHIN_MS,
    );
    const stored = await right.runs.getRun(run.id);
    expect(stored?.attempts.map((a) => [a.generation, a.status])).toEqual([[attempt.generation, "starting"]]);
  });

  it("an effect in delivery on one replica is not delivered again by the replica whose clock is ahead", async () => {
    const right = await replica("right");
    const wrong = await replica("wrong", ahead);
    await right.finality.ingest({ provider: "acme", id: "job-1", state: "succeeded", source: "webhook" });
    // The right replica claims the effect (a 60 s lease) and is delivering it...
    const inFlight = createDispatcher(right.finality, { timeoutMs: 15_000 }).runOnce();
    await deliveryStarted;
    // ...while the other replica's dispatcher looks for due effects.
    expect(await createDispatcher(wrong.finality, { timeoutMs: 15_000 }).runOnce()).toBe(0);
    releaseDelivery();
    expect(await inFlight).toBe(1);
    expect(deliveries).toEqual(["right"]);
  });

  it("a job claimed for a reconcile poll on one replica is not claimed again by the replica whose clock is ahead", async () => {
    const right = await replica("right");
    const wrong = await replica("wrong", ahead);
    await right.finality.register({ provider: "acme", id: "job-2" });
    // As the reconciler claims: due at its `now`, hidden until `now` plus the poll's lease.
    const claim = (r: Replica) => {
      const now = engineOf(r.finality).clock.now();
      return r.store.claimDueJobs(now, 10, now + 45_000, ["acme"]);
    };
    expect((await claim(right)).map((job) => job.id)).toEqual(["job-2"]);
    expect(await claim(wrong)).toEqual([]);
  });

  it("a clock given to the ledger still wins over the store's (fake clocks in tests)", async () => {
    const right = await replica("right");
    const fake = manualClock();
    const ledger = createFinality({ store: right.store, clock: fake });
    expect(engineOf(ledger).clock).toBe(fake);
  });

  it("is what finality serve's ledger counts by on PostgreSQL", async () => {
    const config = parseConfig({ store: { postgres: POSTGRES_TEST_URL, schema } }, {});
    const finality = await finalityFromConfig(config);
    try {
      expect(finality.clock).toBe((finality.store as PostgresStore).clock);
      expect((finality.store as PostgresStore).clock.offsetMs()).not.toBeNull();
    } finally {
      await finality.close();
    }
  });
});
