import { afterAll, afterEach, describe, expect, it } from "vitest";
import { isFinalityError } from "../../src/core/errors.js";
import { type Finality, finalityOn } from "../../src/engine/finality.js";
import { openPostgresStore } from "../../src/store/postgres/postgres-store.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/store/store.js";
import { engineOf } from "../helpers/engine.js";
import {
  adminClient,
  dropSchema,
  POSTGRES_TEST_URL,
  requirePostgres,
  uniqueSchemaName,
} from "../helpers/postgres.js";
import { tempDir } from "../helpers/temp-dir.js";

// `finality.waitFor`: one job awaited until it settles. The stores' fallback poll is an hour, so
// only the settling commit can wake a waiter in time: this process's own on SQLite, another
// replica's NOTIFY on PostgreSQL. "Within 100 ms of the commit" is measured from the moment the
// settling ingest resolved (it resolves after its commit).

const HOUR = 3_600_000;
const admin = adminClient();
afterAll(() => admin.end({ timeout: 5 }));
const dir = tempDir("finality-wait-");
const open: { finality: Finality }[] = [];
let schema = "";
afterEach(async () => {
  for (const { finality } of open.splice(0)) await finality.close();
  if (schema) await dropSchema(admin, schema);
  schema = "";
});

let files = 0;
function onSqlite(wrap: (store: Store) => Store = (s) => s): Finality {
  const store = createSqliteStore({ path: dir.file(`wait-${++files}.db`), settlementPollMs: HOUR });
  const finality = finalityOn({ store: wrap(store) });
  open.push({ finality });
  return finality;
}

const key = (id: string) => ({ provider: "acme", id });
const settle = (finality: Finality, id: string, state = "succeeded") =>
  finality.ingest({ provider: "acme", id, state, source: "api", deliveryId: `d-${id}-${state}` });

/** Resolves with the ms between `trigger` resolving and `waiting` resolving. */
async function lagAfter(waiting: Promise<unknown>, trigger: () => Promise<unknown>): Promise<number> {
  let resolvedAt = 0;
  const done = waiting.then((value) => {
    resolvedAt = performance.now();
    return value;
  });
  await trigger();
  const committedAt = performance.now();
  await done;
  return Math.max(0, resolvedAt - committedAt);
}

describe("finality.waitFor on SQLite", () => {
  it("answers at once for a settled job, and is woken by the settling commit within 100 ms", async () => {
    const finality = onSqlite();
    await finality.register({ provider: "acme", id: "done" });
    await settle(finality, "done");
    expect((await finality.waitFor(key("done"))).state).toBe("succeeded");

    await finality.register({ provider: "acme", id: "later" });
    const waiting = finality.waitFor(key("later"), { timeoutMs: 30_000 });
    await settle(finality, "later", "running");
    const lag = await lagAfter(waiting, () => settle(finality, "later", "failed"));
    expect(lag).toBeLessThan(100);
    expect((await waiting).state).toBe("failed");
  });

  it("times out with a typed error naming the state; an abort rejects with its reason; an unknown job is not-found", async () => {
    const finality = onSqlite();
    await finality.register({ provider: "acme", id: "open" });
    const timedOut = await finality.waitFor(key("open"), { timeoutMs: 50 }).catch((e: unknown) => e);
    expect(isFinalityError(timedOut, "wait-timeout")).toBe(true);
    expect((timedOut as Error).message).toContain("pending");

    const controller = new AbortController();
    const aborted = finality.waitFor(key("open"), { timeoutMs: 30_000, signal: controller.signal });
    controller.abort(new Error("caller gave up"));
    await expect(aborted).rejects.toThrow("caller gave up");

    const missing = await finality.waitFor(key("nobody"), { timeoutMs: 10 }).catch((e: unknown) => e);
    expect(isFinalityError(missing, "not-found")).toBe(true);
    const bad = await finality.waitFor(key("open"), { timeoutMs: -1 }).catch((e: unknown) => e);
    expect(isFinalityError(bad, "invalid-request")).toBe(true);
    expect(engineOf(finality).jobWaiters.watched()).toBe(0);
  });

  it("a hundred waiters on one job share one watch: one read per commit, not one per waiter", async () => {
    let reads = 0;
    const finality = onSqlite(
      (store) =>
        new Proxy(store, {
          get(target, name, receiver) {
            if (name === "getJob") {
              return (...args: Parameters<Store["getJob"]>) => {
                reads += 1;
                return target.getJob(...args);
              };
            }
            return Reflect.get(target, name, receiver);
          },
        }),
    );
    await finality.register({ provider: "acme", id: "popular" });
    const waiters = Array.from({ length: 100 }, () =>
      finality.waitFor(key("popular"), { timeoutMs: 30_000 }),
    );
    // Each waiter reads the job once on arrival; the one watch reads it once when it starts.
    await expect.poll(() => reads).toBeGreaterThanOrEqual(101);
    expect(engineOf(finality).jobWaiters.watched()).toBe(1);
    const before = reads;
    for (let i = 0; i < 5; i++) await settle(finality, `other-${i}`);
    await settle(finality, "popular");
    const jobs = await Promise.all(waiters);
    expect(jobs.every((job) => job.state === "succeeded")).toBe(true);
    // Six commits (five unrelated settlements, then this job's): at most one read each.
    expect(reads - before).toBeLessThanOrEqual(6);
    expect(engineOf(finality).jobWaiters.watched()).toBe(0);
  });
});

describe("finality.waitFor on PostgreSQL", () => {
  it("another replica's settling commit wakes it within 100 ms", async () => {
    await requirePostgres("waitFor on PostgreSQL");
    schema = uniqueSchemaName("finality_waitfor");
    const replica = async () => {
      const store = await openPostgresStore({
        url: POSTGRES_TEST_URL,
        schema,
        max: 3,
        settlementPollMs: HOUR,
      });
      const finality = finalityOn({ store });
      open.push({ finality });
      return finality;
    };
    const [waiter, writer] = [await replica(), await replica()];
    await writer.register({ provider: "acme", id: "remote" });
    // The first wait on a store opens its LISTEN connection: let it listen before the commit.
    await engineOf(waiter).store.settlementCommitted();
    const waiting = waiter.waitFor(key("remote"), { timeoutMs: 30_000 });
    await expect.poll(() => engineOf(waiter).jobWaiters.watched()).toBe(1);
    const lag = await lagAfter(waiting, () => settle(writer, "remote"));
    expect(lag).toBeLessThan(100);
    expect((await waiting).settledBy).toBe("api");
  }, 60_000);
});
