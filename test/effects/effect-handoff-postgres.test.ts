import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { manualClock } from "../../src/core/clock.js";
import type { Job } from "../../src/core/model.js";
import { createFinality } from "../../src/engine/create-finality.js";
import { createDispatcher, type DeliveryAttempt } from "../../src/engine/dispatcher.js";
import type { EffectDefinition } from "../../src/engine/effect-definitions.js";
import type { Finality } from "../../src/engine/finality.js";
import { openPostgresStore, type PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { engineOf } from "../helpers/engine.js";
import { POSTGRES_TEST_URL, postgresSuite, useFreshSchema } from "../helpers/postgres.js";

// On PostgreSQL a webhook's ingest is one statement (migration 0014's finality_ingest, restated
// by 0019): its effects are handed over as the ordinary path's are. The statement writes each row
// it enqueues claimed (`delivering`, attempt 1, leased) while the started dispatcher has room, and
// the commit hands the row to it with the job the statement wrote: no claim, no job read.

const { admin } = await postgresSuite("effects handed over on PostgreSQL");

/**
 * Counts the one-statement ingests, the claim transactions and the store's job reads;
 * `firstClaimEnded` resolves once a dispatcher's first tick has claimed and that claim has ended.
 */
function counted(store: PostgresStore) {
  let firstEnded = () => {};
  const firstClaimEnded = new Promise<void>((resolve) => {
    firstEnded = resolve;
  });
  const counts = { atOnce: 0, claims: 0, jobReads: 0, firstClaimEnded };
  const transaction = store.transaction.bind(store);
  store.transaction = ((work, options) =>
    transaction((tx) => {
      const atOnce = tx.ingestAtOnce?.bind(tx);
      if (atOnce !== undefined)
        tx.ingestAtOnce = (...args) => {
          counts.atOnce++;
          return atOnce(...args);
        };
      return work(tx);
    }, options)) as typeof store.transaction;
  const claimEffects = store.claimEffects.bind(store);
  store.claimEffects = (...args) => {
    counts.claims++;
    const claim = claimEffects(...args);
    void claim.finally(firstEnded).catch(() => {});
    return claim;
  };
  const getJob = store.getJob.bind(store);
  store.getJob = (key) => {
    counts.jobReads++;
    return getJob(key);
  };
  return counts;
}

/** Resolves with each attempt as the dispatcher reports it. */
function attempts() {
  const seen: DeliveryAttempt[] = [];
  let wake = () => {};
  return {
    seen,
    onAttempt(attempt: DeliveryAttempt) {
      seen.push(attempt);
      wake();
    },
    async until(count: number) {
      while (seen.length < count)
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
    },
  };
}

/**
 * Settles `id` under a started dispatcher (no tick after its first claim, pokes as `serve` wires
 * them) and waits for the attempt: how many claims ran for it, and the attempts' outcomes.
 */
async function settleUnderDispatcher(finality: Finality, counts: ReturnType<typeof counted>, id: string) {
  const seen = attempts();
  const dispatcher = createDispatcher(finality, { pollIntervalMs: 3_600_000, onAttempt: seen.onAttempt });
  const unsubscribe = finality.onEffectsEnqueued(() => dispatcher.poke());
  dispatcher.start();
  try {
    await counts.firstClaimEnded;
    const before = counts.claims;
    await settle(finality, id);
    await seen.until(1);
    return { claims: counts.claims - before, outcomes: seen.seen.map((attempt) => attempt.outcome) };
  } finally {
    unsubscribe();
    await dispatcher.stop();
  }
}

/** A promise a handler waits on, and what lets it go. */
function gate() {
  let release = () => {};
  const closed = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { closed, release: () => release() };
}

/** A started dispatcher with one delivery slot and no tick after its first claim. */
function oneSlot(finality: Finality) {
  const seen = attempts();
  const dispatcher = createDispatcher(finality, {
    concurrency: 1,
    pollIntervalMs: 3_600_000,
    onAttempt: seen.onAttempt,
  });
  dispatcher.start();
  return { seen, dispatcher };
}

const settle = (finality: Finality, id: string) =>
  finality.ingest({ provider: "acme", id, state: "succeeded", source: "webhook", deliveryId: `d-${id}` });

describe("effects handed over by PostgreSQL's one-statement ingest", () => {
  const pg = useFreshSchema(admin);

  async function ledger(effects: EffectDefinition[], open: () => Promise<PostgresStore> = pg.open) {
    const store = await open();
    const counts = counted(store);
    const finality = createFinality({ store, clock: manualClock(), effects });
    return { finality, store, counts };
  }

  it("writes the row claimed and delivers it, with the statement's job, without a claim or a read", async () => {
    let rowWhileInFlight: unknown = null;
    const delivered: Job[] = [];
    const { finality, store, counts } = await ledger([
      {
        name: "notify",
        handler: async (delivery) => {
          delivered.push(delivery.job);
          const [row] = (await store.listEffects({ jobId: delivery.job.id })).items;
          rowWhileInFlight = row && {
            status: row.status,
            attempts: row.attempts,
            leased: row.leaseUntil !== null,
          };
        },
      },
    ]);
    const settled = await settleUnderDispatcher(finality, counts, "a");
    expect(settled.claims).toBe(0);
    expect(counts.atOnce).toBe(1);
    expect(counts.jobReads).toBe(0);
    expect(rowWhileInFlight).toEqual({ status: "delivering", attempts: 1, leased: true });
    expect(settled.outcomes).toEqual(["delivered"]);
    expect(delivered).toEqual([await engineOf(finality).store.getJob({ provider: "acme", id: "a" })]);
    const [row] = (await store.listEffects({ jobId: "a" })).items;
    expect({ status: row?.status, attempts: row?.attempts, leaseUntil: row?.leaseUntil }).toEqual({
      status: "delivered",
      attempts: 1,
      leaseUntil: null,
    });
  });

  it("with no room writes the row pending, for a claim to take", async () => {
    const { closed, release } = gate();
    const { finality, store, counts } = await ledger([
      { name: "notify", handler: (delivery) => (delivery.job.id === "first" ? closed : Promise.resolve()) },
    ]);
    const { seen, dispatcher } = oneSlot(finality);
    try {
      await settle(finality, "first");
      await settle(finality, "second");
      const [waiting] = (await store.listEffects({ jobId: "second" })).items;
      expect({
        status: waiting?.status,
        attempts: waiting?.attempts,
        leaseUntil: waiting?.leaseUntil,
      }).toEqual({
        status: "pending",
        attempts: 0,
        leaseUntil: null,
      });
      const claimsBefore = counts.claims;
      release();
      await seen.until(2);
      // The slot the first delivery freed claimed the second.
      expect(counts.claims - claimsBefore).toBeGreaterThanOrEqual(1);
    } finally {
      release();
      await dispatcher.stop();
    }
    expect(counts.atOnce).toBe(2);
    expect(seen.seen.map((attempt) => [attempt.effect.jobId, attempt.outcome])).toEqual([
      ["first", "delivered"],
      ["second", "delivered"],
    ]);
  });

  it("asks for no room for effects it plans and then does not enqueue (no claim follows)", async () => {
    const { closed, release } = gate();
    const { finality, counts } = await ledger([{ name: "notify", handler: () => closed }]);
    const { seen, dispatcher } = oneSlot(finality);
    try {
      await counts.firstClaimEnded;
      await settle(finality, "a");
      // The one slot is taken. The same state again, under another delivery id: planned, not fired.
      await finality.ingest({
        provider: "acme",
        id: "a",
        state: "succeeded",
        source: "webhook",
        deliveryId: "d-a2",
      });
      const claimsBefore = counts.claims;
      release();
      await seen.until(1);
      // The delivery's end (where a backlog claims) has run once this turn's microtasks have.
      await new Promise<void>((resolve) => setImmediate(resolve));
      expect(counts.claims - claimsBefore).toBe(0);
    } finally {
      release();
      await dispatcher.stop();
    }
    expect(counts.atOnce).toBe(2);
  });

  it("on a schema before migration 0019, left unmigrated, writes rows pending and hands none over", async () => {
    // The schema as 0018 left it: migrated, then 0014's function put back and 0019 unrecorded.
    const migrated = await pg.open();
    await migrated.opened();
    const original = readFileSync(
      new URL("../../migrations/postgres/0014_ingest_at_once.sql", import.meta.url),
      "utf8",
    );
    const ingestFunction = original.slice(original.indexOf("CREATE FUNCTION finality_ingest("));
    await admin.begin("", async (tx) => {
      await tx.unsafe(`SET LOCAL search_path TO "${pg.schema()}"`);
      await tx.unsafe(ingestFunction.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION"));
      await tx.unsafe("DELETE FROM schema_migrations WHERE version = 19");
    });
    const delivered: string[] = [];
    let unmigrated: PostgresStore | undefined;
    const { finality, counts } = await ledger(
      [{ name: "notify", handler: async (delivery) => void delivered.push(delivery.job.id) }],
      async () => {
        unmigrated = await openPostgresStore({
          url: POSTGRES_TEST_URL,
          schema: pg.schema(),
          max: 4,
          migrate: false,
        });
        return unmigrated;
      },
    );
    try {
      const settled = await settleUnderDispatcher(finality, counts, "a");
      // Claimed by the dispatcher's own claim, after the poke: once, and delivered.
      expect(settled.claims).toBeGreaterThanOrEqual(1);
      expect(settled.outcomes).toEqual(["delivered"]);
    } finally {
      await unmigrated?.close();
    }
    expect(counts.atOnce).toBe(1);
    expect(delivered).toEqual(["a"]);
  });
});
