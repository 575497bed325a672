import { describe, expect, it } from "vitest";
import { manualClock } from "../../src/core/clock.js";
import type { Job } from "../../src/core/model.js";
import { createFinality } from "../../src/engine/create-finality.js";
import { createDispatcher, type DeliveryAttempt } from "../../src/engine/dispatcher.js";
import type { EffectDefinition } from "../../src/engine/effect-definitions.js";
import type { Finality } from "../../src/engine/finality.js";
import type { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { engineOf } from "../helpers/engine.js";
import { postgresSuite, useFreshSchema } from "../helpers/postgres.js";

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

const settle = (finality: Finality, id: string) =>
  finality.ingest({ provider: "acme", id, state: "succeeded", source: "webhook", deliveryId: `d-${id}` });

describe("effects handed over by PostgreSQL's one-statement ingest", () => {
  const pg = useFreshSchema(admin);

  async function ledger(effects: EffectDefinition[]) {
    const store = await pg.open();
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
    const seen = attempts();
    const dispatcher = createDispatcher(finality, { pollIntervalMs: 3_600_000, onAttempt: seen.onAttempt });
    dispatcher.start();
    try {
      await counts.firstClaimEnded;
      const claimsBefore = counts.claims;
      await settle(finality, "a");
      await seen.until(1);
      expect(counts.claims - claimsBefore).toBe(0);
    } finally {
      await dispatcher.stop();
    }
    expect(counts.atOnce).toBe(1);
    expect(counts.jobReads).toBe(0);
    expect(rowWhileInFlight).toEqual({ status: "delivering", attempts: 1, leased: true });
    expect(seen.seen.map((attempt) => attempt.outcome)).toEqual(["delivered"]);
    expect(delivered).toEqual([await engineOf(finality).store.getJob({ provider: "acme", id: "a" })]);
    const [row] = (await store.listEffects({ jobId: "a" })).items;
    expect({ status: row?.status, attempts: row?.attempts, leaseUntil: row?.leaseUntil }).toEqual({
      status: "delivered",
      attempts: 1,
      leaseUntil: null,
    });
  });

  it("with no room writes the row pending, for a claim to take", async () => {
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { finality, store, counts } = await ledger([
      { name: "notify", handler: (delivery) => (delivery.job.id === "first" ? gate : Promise.resolve()) },
    ]);
    const seen = attempts();
    const dispatcher = createDispatcher(finality, {
      concurrency: 1,
      pollIntervalMs: 3_600_000,
      onAttempt: seen.onAttempt,
    });
    dispatcher.start();
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
});
