import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load-config.js";
import { isFinalityError } from "../../src/core/errors.js";
import { postgresStoreOptions } from "../../src/host/node/finality-from-config.js";
import { openPostgresStore, type PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { POSTGRES_TEST_URL, postgresSuite, uniqueSchemaName } from "../helpers/postgres.js";
import { makeJob } from "../helpers/records.js";

// What a stalled peer or a starved pool must not do to this replica: hang it.
const { admin } = await postgresSuite("PostgreSQL timeouts and readiness");

/** Resolves when `promise` settles, with how it ended and how long it took. */
async function timed<T>(promise: Promise<T>): Promise<{ ms: number; value?: T; error?: unknown }> {
  const started = performance.now();
  try {
    const value = await promise;
    return { ms: performance.now() - started, value };
  } catch (error) {
    return { ms: performance.now() - started, error };
  }
}

/** A promise and the function that resolves it: to hold a transaction open until the test says. */
function gate(): { wait: Promise<void>; open(): void } {
  let open = () => {};
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { wait, open };
}

describe("PostgreSQL store settings from the configuration", () => {
  it("every timeout and the pool size reach the store's options, in milliseconds", () => {
    const config = parseConfig(
      {
        store: {
          postgres: POSTGRES_TEST_URL,
          schema: "finality",
          poolSize: 4,
          connectTimeoutSeconds: 2,
          statementTimeoutSeconds: 3,
          lockTimeoutSeconds: 0.5,
          idleInTransactionTimeoutSeconds: 7,
          queryTimeoutSeconds: 4,
        },
      },
      {},
    );
    expect(postgresStoreOptions(config.store as Extract<typeof config.store, { postgres: string }>)).toEqual({
      url: POSTGRES_TEST_URL,
      schema: "finality",
      max: 4,
      connectTimeoutSeconds: 2,
      statementTimeoutMs: 3000,
      lockTimeoutMs: 500,
      idleInTransactionTimeoutMs: 7000,
      queryTimeoutMs: 4000,
    });
  });

  it("a client deadline no longer than statement_timeout is refused, naming both keys", () => {
    const refused = (store: Record<string, unknown>) => () =>
      parseConfig({ store: { postgres: POSTGRES_TEST_URL, ...store } }, {});
    expect(refused({ statementTimeoutSeconds: 3, queryTimeoutSeconds: 3 })).toThrow(
      /store\.queryTimeoutSeconds.*store\.statementTimeoutSeconds \(3 s\)/,
    );
    // Against statement_timeout's default (15 s) when only the deadline is given.
    expect(refused({ queryTimeoutSeconds: 10 })).toThrow(/store\.statementTimeoutSeconds \(15 s\)/);
    expect(refused({ queryTimeoutSeconds: 16 })).not.toThrow();
  });

  it("DATABASE_URL keeps the file's pool and timeout settings", () => {
    const file = { store: { postgres: "postgres://elsewhere/db", lockTimeoutSeconds: 1, poolSize: 3 } };
    expect(parseConfig(file, { DATABASE_URL: POSTGRES_TEST_URL }).store).toEqual({
      postgres: POSTGRES_TEST_URL,
      lockTimeoutSeconds: 1,
      poolSize: 3,
    });
  });
});

describe("PostgreSQL store under a stalled peer or a starved pool", () => {
  const stores: PostgresStore[] = [];
  const schemas: string[] = [];
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    for (const schema of schemas.splice(0)) await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  });
  async function open(options: Parameters<typeof openPostgresStore>[0] extends infer O ? Partial<O> : never) {
    const schema = uniqueSchemaName("finality_faults");
    schemas.push(schema);
    const store = await openPostgresStore({ url: POSTGRES_TEST_URL, schema, max: 4, ...options });
    stores.push(store);
    return { store, schema };
  }

  it("the three timeouts are set on the server session", async () => {
    const { store } = await open({
      statementTimeoutMs: 3100,
      lockTimeoutMs: 700,
      idleInTransactionTimeoutMs: 4200,
    });
    const settings = await store.transaction(async (tx) => ({
      statement: await tx.execute("SHOW statement_timeout"),
      lock: await tx.execute("SHOW lock_timeout"),
      idle: await tx.execute("SHOW idle_in_transaction_session_timeout"),
    }));
    expect(settings).toEqual({
      statement: [{ statement_timeout: "3100ms" }],
      lock: [{ lock_timeout: "700ms" }],
      idle: [{ idle_in_transaction_session_timeout: "4200ms" }],
    });
  });

  it("a row lock held by a stalled peer: the waiting ingest is answered store-unavailable after lock_timeout", async () => {
    const { store, schema } = await open({ lockTimeoutMs: 300 });
    await store.transaction((tx) => tx.insertJob(makeJob({ id: "job-1" })));
    // The peer: another session that locked the row and went quiet.
    const held = gate();
    const peer = admin.begin(async (tx) => {
      await tx.unsafe(`SELECT 1 FROM "${schema}".jobs WHERE id = 'job-1' FOR UPDATE`);
      await held.wait;
    });
    try {
      await expect
        .poll(
          async () =>
            (
              await admin.unsafe(
                `SELECT 1 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'jobs' AND l.mode = 'RowShareLock'`,
              )
            )?.length,
        )
        .toBeGreaterThan(0);
      const result = await timed(store.transaction((tx) => tx.getJob({ provider: "generic", id: "job-1" })));
      expect(isFinalityError(result.error, "store-unavailable")).toBe(true);
      expect(result.ms).toBeLessThan(3000);
      expect(store.poolStats().lockTimeouts).toBe(1);
    } finally {
      held.open();
      await peer;
    }
  });

  it("a transaction left idle (its replica frozen): the server ends it and its locks are released", async () => {
    const { store, schema } = await open({ idleInTransactionTimeoutMs: 300 });
    await store.transaction((tx) => tx.insertJob(makeJob({ id: "job-1" })));
    const frozen = gate();
    const locked = gate();
    const stalled = timed(
      store.transaction(async (tx) => {
        await tx.getJob({ provider: "generic", id: "job-1" });
        locked.open();
        await frozen.wait;
      }),
    );
    await locked.wait;
    // Someone else can lock the row within a second of the timeout: the frozen session is gone.
    const other = await timed(
      admin.begin(async (tx) => {
        await tx.unsafe("SET LOCAL lock_timeout = '3s'");
        await tx.unsafe(`SELECT 1 FROM "${schema}".jobs WHERE id = 'job-1' FOR UPDATE`);
      }) ?? Promise.resolve(),
    );
    expect(other.error).toBeUndefined();
    frozen.open();
    const result = await stalled;
    expect(isFinalityError(result.error, "store-unavailable")).toBe(true);
    // The pool opens a fresh connection for the next caller.
    expect(await store.getJob({ provider: "generic", id: "job-1" })).not.toBeNull();
  });

  it("a statement running past statement_timeout is cancelled and answered store-unavailable", async () => {
    const { store } = await open({ statementTimeoutMs: 200 });
    const result = await timed(store.transaction((tx) => tx.execute("SELECT pg_sleep(5)")));
    expect(isFinalityError(result.error, "store-unavailable")).toBe(true);
    expect(result.ms).toBeLessThan(3000);
    expect(store.poolStats().statementTimeouts).toBe(1);
  });

  it("every pooled connection taken: a further caller waits at most connectTimeoutSeconds, counted", async () => {
    const { store } = await open({ max: 1, connectTimeoutSeconds: 0.3 });
    const held = gate();
    const holder = store.transaction(async () => {
      await held.wait;
    });
    try {
      const result = await timed(store.getJob({ provider: "generic", id: "x" }));
      expect(isFinalityError(result.error, "store-unavailable")).toBe(true);
      expect(result.ms).toBeLessThan(2000);
      expect(store.poolStats()).toMatchObject({ waitTimeouts: 1 });
      expect(store.poolStats().waits).toBeGreaterThanOrEqual(1);
    } finally {
      held.open();
      await holder;
    }
  });

  it("ready() says false within about a second while the pool is starved, true again after", async () => {
    const { store } = await open({ max: 1, connectTimeoutSeconds: 10 });
    expect(await store.ready()).toBe(true);
    const held = gate();
    const holder = store.transaction(async () => {
      await held.wait;
    });
    const waiter = store.getJob({ provider: "generic", id: "x" });
    try {
      // The waiter must have waited a second before the pool counts as starved.
      await expect.poll(() => store.poolStats().waiting, { timeout: 2000 }).toBe(1);
      const probes: { ms: number; value?: boolean }[] = [];
      for (let i = 0; i < 3 && probes.at(-1)?.value !== false; i++) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        probes.push(await timed(store.ready()));
      }
      expect(probes.at(-1)?.value).toBe(false);
      for (const probe of probes) expect(probe.ms).toBeLessThan(1500);
    } finally {
      held.open();
      await holder;
      await waiter;
    }
    expect(await store.ready()).toBe(true);
  });

  it("ready() says false within about a second when the database does not answer", async () => {
    const { store } = await open({});
    // A listener that accepts and never speaks: no refusal to go by, only the deadline.
    const { createServer } = await import("node:net");
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const port = (silent.address() as { port: number }).port;
    const { createPostgresStore } = await import("../../src/store/postgres/postgres-store.js");
    const unreachable = createPostgresStore({
      url: `postgres://postgres@127.0.0.1:${port}/test`,
      migrate: false,
    });
    try {
      const result = await timed(unreachable.ready());
      expect(result.value).toBe(false);
      expect(result.ms).toBeLessThan(1500);
      expect(await store.ready()).toBe(true);
    } finally {
      await unreachable.close();
      silent.close();
    }
  });
});
