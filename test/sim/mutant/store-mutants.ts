import type { Job } from "../../../src/core/model.js";
import type { Store, StoreTx } from "../../../src/store/store.js";

/**
 * Deliberately broken stores, one per invariant added for issue 15, to show that the simulator
 * catches each. Each brings back one of the fixed defects at the store boundary, where the
 * simulator wraps the real SQLite store. Picked by FINALITY_SIM_MUTANT (`npm run sim -- --mutant
 * NAME`, or test/sim/mutant-store.test.ts).
 */
export const STORE_MUTANTS = {
  /** Retention's tombstones are never read: a late webhook brings a pruned job back (defect 2). */
  "tombstone-forgotten": {
    store: { getTombstone: async () => null },
    tx: { getTombstone: async () => null },
  },
  /** Registration finds no parked observation: what was parked for the job is left behind (defect 4). */
  "parked-left-behind": { store: {}, tx: { takeParked: async () => [] } },
  /** Registering a settled job that had no kind enqueues no kind-filtered effect (defect 9). */
  "late-kind-effect-skipped": { store: {}, tx: {} },
  /** A claim's lease is 1 ms, as if never held: a row still in flight is claimed and sent again (defect 5). */
  "lease-ignored": { store: {}, tx: {} },
  /**
   * Discovery sweeps resume past everything the provider lists (a cursor kept wrong): a job never
   * registered whose webhooks were all lost is never known (issue 17).
   */
  "discovery-cursor-ahead": { store: { getDiscoveryCursor: async () => "1000000" }, tx: {} },
  // Issue 33: one per invariant that had none.
  /** The stuck alert is never enqueued: a job flagged stuck alerts nobody. */
  "alert-skipped": { store: {}, tx: {} },
  /** The feed drops its amendments: a kind-filtered reader never sees a job whose kind came late. */
  "amendments-dropped": { store: {}, tx: {} },
  /** A webhook's `running` event is acknowledged but never written. */
  "running-events-dropped": { store: {}, tx: {} },
  /** An attempt is declared lost without the lease-expired code that says why. */
  "lost-without-code": { store: {}, tx: {} },
  /**
   * The job's own parked rows are never found (a per-job lookup on the wrong key): registration
   * takes and sees nothing, and what was parked waits beside the job forever.
   */
  "parked-lookup-misses": { store: {}, tx: { takeParked: async () => [] } },
  /**
   * The lease sweeper's query finds nothing due (a comparison on the wrong column): a run whose
   * worker died is never expired, retried or declared lost, and stays running for good.
   */
  "leases-never-due": { store: { dueLeases: async () => [] }, tx: {} },
  /**
   * A claim is stored as a sign of life (`starting`, as after a heartbeat): a worker that dies
   * before it began costs the run an attempt, and a run that kills its worker at once is retried
   * by attempts, not bounded by releases before start.
   */
  "claim-counts-as-alive": { store: {}, tx: {} },
  /**
   * Sequence 0 is taken as already recorded (the claim with `start` once used the worker's
   * sequence 0): a worker numbering its reports from 0 has its first one answered `duplicate`.
   */
  "seq-zero-taken": { store: {}, tx: {} },
  /**
   * An effect handed to the dispatcher by the transaction that enqueued it is stored unclaimed
   * (pending, no lease): a claim takes the row as well, and it is sent twice at once.
   */
  "handed-unclaimed": { store: {}, tx: {} },
  /**
   * The ledger stores a settlement otherwise than the job its ingest computed (a millisecond
   * later): an effect handed over with the job its transaction wrote delivers a settlement the
   * ledger does not hold.
   */
  "settlement-stored-otherwise": { store: {}, tx: {} },
} as const satisfies Record<string, { store: Partial<Store>; tx: Partial<StoreTx> }>;

export type StoreMutantName = keyof typeof STORE_MUTANTS;

export function isStoreMutantName(name: string | undefined): name is StoreMutantName {
  return name !== undefined && Object.hasOwn(STORE_MUTANTS, name);
}

/** `store` with the mutant named by FINALITY_SIM_MUTANT, if it names a store mutant. */
export function mutateStore(store: Store, name = process.env.FINALITY_SIM_MUTANT): Store {
  if (!isStoreMutantName(name)) return store;
  const mutant = STORE_MUTANTS[name];
  const txOverrides = (tx: StoreTx): Partial<StoreTx> => {
    if (name === "alert-skipped")
      return {
        enqueueEffect: async (effect) => (effect.name === "alert" ? false : tx.enqueueEffect(effect)),
      };
    if (name === "settlement-stored-otherwise") {
      const otherwise = (job: Job): Job =>
        job.settledAt === null ? job : { ...job, settledAt: job.settledAt + 1 };
      return {
        insertJob: (job) => tx.insertJob(otherwise(job)),
        updateJob: (job, version, current) => tx.updateJob(otherwise(job), version, current),
      };
    }
    if (name === "handed-unclaimed")
      return {
        enqueueEffect: (effect, last) =>
          tx.enqueueEffect({ ...effect, status: "pending", attempts: 0, leaseUntil: null }, last),
      };
    if (name === "running-events-dropped")
      return {
        appendEvent: async (event) =>
          event.source === "webhook" && event.state === "running" ? true : tx.appendEvent(event),
      };
    if (name === "claim-counts-as-alive")
      return {
        insertAttempt: (attempt, end) =>
          tx.insertAttempt(attempt.status === "claimed" ? { ...attempt, status: "starting" } : attempt, end),
      };
    if (name === "seq-zero-taken")
      return {
        runEventDetail: async (key) => (key.endsWith(":seq:0") ? {} : tx.runEventDetail(key)),
      };
    if (name === "lost-without-code")
      return {
        updateAttempt: (attempt, version, end, previous) =>
          tx.updateAttempt(
            attempt.status === "lost" ? { ...attempt, error: { code: "GONE" } } : attempt,
            version,
            end,
            previous,
          ),
      };
    if (name !== "late-kind-effect-skipped") return mutant.tx;
    // The old registration: the settled, kindless job it found stayed without its kind's effects.
    let settledWithoutKind = false;
    return {
      getJob: async (key) => {
        const job: Job | null = await tx.getJob(key);
        if (job?.settledAt != null && job.kind === null) settledWithoutKind = true;
        return job;
      },
      enqueueEffect: async (effect) =>
        settledWithoutKind && effect.name === "render-done" ? false : tx.enqueueEffect(effect),
    };
  };
  const overrides: Partial<Store> = {
    ...mutant.store,
    transaction: (work) => store.transaction((tx) => work(overlay(tx, txOverrides(tx)))),
    ...(name === "lease-ignored" ? { claimEffects: (now, limit) => store.claimEffects(now, limit, 1) } : {}),
    ...(name === "amendments-dropped"
      ? {
          readSettlements: async (query) => {
            const page = await store.readSettlements(query);
            return { ...page, items: page.items.filter((s) => !s.amendment) };
          },
        }
      : {}),
    ...(name === "parked-lookup-misses"
      ? {
          listParked: (query) =>
            query.id !== undefined
              ? Promise.resolve({ items: [], nextCursor: null })
              : store.listParked(query),
        }
      : {}),
  };
  return overlay(store, overrides);
}

function overlay<T extends object>(target: T, overrides: Partial<T>): T {
  return new Proxy(target, {
    get(t, property) {
      if (Object.hasOwn(overrides, property)) return overrides[property as keyof T];
      const value = Reflect.get(t, property, t);
      return typeof value === "function" ? value.bind(t) : value;
    },
  });
}
