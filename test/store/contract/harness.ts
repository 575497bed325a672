import { afterEach, beforeEach } from "vitest";
import type { Effect, Job } from "../../../src/core/model.js";
import type { Store } from "../../../src/store/store.js";

/** What an adapter's test file hands the contract for one test: a fresh, empty, migrated store. */
export interface StoreFixture {
  store: Store;
  /** Opens the same database again (the harness closes `store` first): migrations must be idempotent. */
  reopen?: () => Promise<Store>;
  /** Opens a second, independent connection/instance on the same database. */
  openSecond?: () => Promise<Store>;
  /** Drops the database (file, schema, ...). The harness has closed every store it was given. */
  cleanup(): Promise<void>;
}

export interface StoreContractContext {
  /** Unique per test: adapters may use it to name a schema or a database. */
  testName: string;
}

export type OpenStore = (ctx: StoreContractContext) => Promise<StoreFixture>;

export interface ContractScope {
  store(): Store;
  fixture(): StoreFixture;
  /** Opens through `reopen`/`openSecond` and remembers the store so that it is closed after the test. */
  track(store: Store): Store;
}

/** Registers beforeEach/afterEach that give every test its own fixture. */
export function useStoreFixture(open: OpenStore): ContractScope {
  let current: StoreFixture | null = null;
  let extra: Store[] = [];
  let counter = 0;
  beforeEach(async (context) => {
    counter += 1;
    current = await open({ testName: `${counter}-${context.task.name}` });
  });
  afterEach(async () => {
    const fixture = current;
    current = null;
    for (const store of extra) await store.close();
    extra = [];
    if (fixture === null) return;
    await fixture.store.close();
    await fixture.cleanup();
  });
  const fixture = () => {
    if (current === null) throw new Error("no store fixture outside a test");
    return current;
  };
  return {
    fixture,
    store: () => fixture().store,
    track(store) {
      extra.push(store);
      return store;
    },
  };
}

export async function insertJobs(store: Store, jobs: readonly Job[]): Promise<void> {
  await store.transaction(async (tx) => {
    for (const job of jobs) if (!(await tx.insertJob(job))) throw new Error(`job ${job.id} exists`);
  });
}

export async function insertEffects(store: Store, effects: readonly Effect[]): Promise<void> {
  await store.transaction(async (tx) => {
    for (const effect of effects)
      if (!(await tx.enqueueEffect(effect))) throw new Error(`effect ${effect.id} exists`);
  });
}

/** Every item of a paged listing, following cursors until the last page. */
export async function collectPages<T>(
  page: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor: string | null }>,
): Promise<{ items: T[]; pages: number }> {
  const items: T[] = [];
  let cursor: string | undefined;
  for (let pages = 1; pages < 10_000; pages++) {
    const result = await page(cursor);
    items.push(...result.items);
    if (result.nextCursor === null) return { items, pages };
    cursor = result.nextCursor;
  }
  throw new Error("paging never ended");
}
