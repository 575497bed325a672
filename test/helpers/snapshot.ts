import type { Effect, Job, JobEvent, JobKey } from "../../src/core/model.js";
import type { Store } from "../../src/store/store.js";

export interface LedgerSnapshot {
  job: Job | null;
  events: JobEvent[];
  effects: Effect[];
  /** Every job key in the store, to catch a stray insert under another key. */
  keys: string[];
}

/** What the store holds about one job (and which jobs exist), read through the port. */
export async function snapshot(store: Store, key: JobKey): Promise<LedgerSnapshot> {
  const keys: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.listJobs({ limit: 500, cursor });
    keys.push(...page.items.map((j) => `${j.provider}/${j.id}`));
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return {
    job: await store.getJob(key),
    events: await store.jobEvents(key, { limit: 10_000 }),
    effects: (await store.listEffects({ provider: key.provider, jobId: key.id, limit: 500 })).items,
    keys: keys.sort(),
  };
}
