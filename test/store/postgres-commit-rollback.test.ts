import { afterAll, describe, expect, it } from "vitest";
import { loadMigrations } from "../../src/store/migrations.js";
import { createClient, IN_TRANSACTION } from "../../src/store/postgres/postgres-client.js";
import { freezableProxy } from "../helpers/freezable-proxy.js";
import {
  adminClient,
  dropSchema,
  POSTGRES_TEST_URL,
  requirePostgres,
  uniqueSchemaName,
} from "../helpers/postgres.js";

// PostgreSQL answers COMMIT with ROLLBACK, and no error, in a transaction where a statement failed:
// work that caught that statement's error must not be told that its writes are stored.

const admin = adminClient();
afterAll(() => admin.end({ timeout: 5 }));

describe("a transaction whose failed statement was caught", () => {
  it("rejects at COMMIT instead of resolving, and stores nothing", async () => {
    await requirePostgres("COMMIT answered with ROLLBACK");
    const schema = uniqueSchemaName("finality_rollback");
    await admin.unsafe(`CREATE SCHEMA "${schema}"`);
    await admin.unsafe(`CREATE TABLE "${schema}".t (id int PRIMARY KEY)`);
    const sql = createClient({ url: POSTGRES_TEST_URL, schema, max: 1 });
    try {
      const outcome = sql
        .begin(async (tx) => {
          await tx.unsafe("INSERT INTO t VALUES (1)");
          await tx.unsafe("INSERT INTO t VALUES (1)").catch(() => "duplicate key, caught");
          return "done";
        })
        .then(
          (value) => ({ resolved: value }),
          (error: Error) => ({ rejected: error.message }),
        );
      expect(await outcome).toEqual({ rejected: expect.stringContaining("rolled back at COMMIT") });
      expect(await admin.unsafe(`SELECT id FROM "${schema}".t`)).toHaveLength(0);
      // The connection is usable afterwards.
      await expect(sql.begin(async (tx) => tx.unsafe("INSERT INTO t VALUES (2)"))).resolves.toBeDefined();
    } finally {
      await sql.end({ timeout: 5 });
      await dropSchema(admin, schema);
    }
  });

  it("with a transaction's own lock_timeout (its COMMIT restores the default first), also rejects and stores nothing", async () => {
    await requirePostgres("COMMIT answered with ROLLBACK");
    const schema = uniqueSchemaName("finality_rollback_lt");
    await admin.unsafe(`CREATE SCHEMA "${schema}"`);
    await admin.unsafe(`CREATE TABLE "${schema}".t (id int PRIMARY KEY)`);
    const sql = createClient({ url: POSTGRES_TEST_URL, schema, max: 1 });
    try {
      const outcome = sql.begin(
        "isolation level read committed",
        async (tx) => {
          await tx.unsafe("INSERT INTO t VALUES (1)");
          await tx.unsafe("INSERT INTO t VALUES (1)").catch(() => "duplicate key, caught");
          return "done";
        },
        { lockTimeoutMs: 20 },
      );
      await expect(outcome).rejects.toThrow();
      expect(await admin.unsafe(`SELECT id FROM "${schema}".t`)).toHaveLength(0);
      await expect(sql.begin(async (tx) => tx.unsafe("INSERT INTO t VALUES (2)"))).resolves.toBeDefined();
    } finally {
      await sql.end({ timeout: 5 });
      await dropSchema(admin, schema);
    }
  });
});

// The COMMIT may go out behind a work's last statement, before its answer (QueryOptions.last,
// TransactionSettings.worksLeft): a last statement that fails must still end in ROLLBACK and a
// rejection, and a work that breaks the promise must be told loudly, not resolved.
/**
 * A schema holding table t and finality_before (migration 0015), with which the database checks
 * that it reached a COMMIT sent ahead in time; the tests give it a deadline on this machine's
 * clock (the same clock as the database's here).
 */
async function createSchemaWithTable(name: string): Promise<string> {
  const schema = uniqueSchemaName(name);
  await admin.unsafe(`CREATE SCHEMA "${schema}"`);
  await admin.unsafe(`CREATE TABLE "${schema}".t (id int PRIMARY KEY)`);
  await admin.begin(async (tx) => {
    await tx.unsafe(`SET LOCAL search_path TO "${schema}"`);
    await tx.unsafe(loadMigrations("postgres").find((m) => m.name === "finality_before")?.sql ?? "");
  });
  return schema;
}

describe("a COMMIT sent ahead of the last statement's answer", () => {
  async function withTable(
    name: string,
    test: (sql: ReturnType<typeof createClient>) => Promise<void>,
    databaseNow: () => number | null = () => Date.now(),
  ) {
    await requirePostgres("COMMIT ahead of the last statement");
    const schema = await createSchemaWithTable(name);
    const sql = createClient({ url: POSTGRES_TEST_URL, schema, max: 1, databaseNow });
    try {
      await test(sql);
      // The connection is usable afterwards.
      await expect(sql.begin(async (tx) => tx.unsafe("INSERT INTO t VALUES (99)"))).resolves.toBeDefined();
    } finally {
      await sql.end({ timeout: 5 });
      await dropSchema(admin, schema);
    }
    return schema;
  }
  const ahead = (left: () => number) => ({ lockTimeoutMs: 20, together: true, worksLeft: left });

  it("goes out with the last statement and commits it", async () => {
    await withTable("finality_ahead_ok", async (sql) => {
      let left = 1;
      const value = await sql.begin(
        "isolation level read committed",
        async (tx) => {
          expect(tx.commitsAhead).toBe(true);
          // The COMMIT goes ahead only once BEGIN has answered: ingest's load goes with BEGIN.
          await tx.unsafe("SELECT 1");
          await tx.unsafe("INSERT INTO t VALUES (1)", [], { last: true });
          left = 0;
          return "done";
        },
        ahead(() => left),
      );
      expect(value).toBe("done");
      expect([...(await sql.unsafe("SELECT id FROM t"))]).toEqual([{ id: 1 }]);
    });
  });

  it("answers ROLLBACK when the last statement fails: the work's error is thrown, nothing is stored", async () => {
    await withTable("finality_ahead_fail", async (sql) => {
      let left = 1;
      const outcome = sql.begin(
        "isolation level read committed",
        async (tx) => {
          await tx.unsafe("INSERT INTO t VALUES (1)");
          await tx.unsafe("INSERT INTO t VALUES (1)", [], { last: true });
          left = 0;
        },
        ahead(() => left),
      );
      await expect(outcome).rejects.toMatchObject({ code: "23505" });
      expect(await sql.unsafe("SELECT id FROM t")).toHaveLength(0);
    });
  });

  it("refuses a statement after the last one, and says the transaction committed though its work failed", async () => {
    await withTable("finality_ahead_broken", async (sql) => {
      let left = 1;
      const outcome = sql.begin(
        "isolation level read committed",
        async (tx) => {
          await tx.unsafe("SELECT 1");
          await tx.unsafe("INSERT INTO t VALUES (1)", [], { last: true });
          await tx.unsafe("INSERT INTO t VALUES (2)");
          left = 0;
        },
        ahead(() => left),
      );
      await expect(outcome).rejects.toThrow(/committed, yet its work failed after its last statement/);
      // What the last statement wrote is stored (the caller is told so); what came after is not.
      expect([...(await sql.unsafe("SELECT id FROM t ORDER BY id"))]).toEqual([{ id: 1 }]);
    });
  });

  it("waits for every answer while a work is left that has not sent its last statement", async () => {
    await withTable("finality_ahead_wait", async (sql) => {
      // Two works; the second still has a statement to send after the first's last one.
      let left = 2;
      await sql.begin(
        "isolation level read committed",
        async (tx) => {
          await tx.unsafe("SELECT 1");
          await Promise.all([
            tx.unsafe("INSERT INTO t VALUES (1)", [], { last: true }).then(() => left--),
            (async () => {
              // Busy with something else when the first's last statement goes out (setImmediate
              // runs after the flush that sends it, which was queued first).
              await new Promise((resolve) => setImmediate(resolve));
              await tx.unsafe("INSERT INTO t VALUES (2)");
              await tx.unsafe("INSERT INTO t VALUES (3)", [], { last: true });
              left--;
            })(),
          ]);
        },
        ahead(() => left),
      );
      expect([...(await sql.unsafe("SELECT id FROM t ORDER BY id"))]).toEqual([
        { id: 1 },
        { id: 2 },
        { id: 3 },
      ]);
    });
  });

  it("waits for every answer while the database's clock is unknown (no deadline to give it)", async () => {
    await withTable(
      "finality_ahead_noclock",
      async (sql) => {
        let left = 1;
        await sql.begin(
          "isolation level read committed",
          async (tx) => {
            await tx.unsafe("SELECT 1");
            await tx.unsafe("INSERT INTO t VALUES (1)", [], { last: true });
            // Had the COMMIT gone ahead, this would be refused.
            await tx.unsafe("INSERT INTO t VALUES (2)");
            left = 0;
          },
          ahead(() => left),
        );
        expect([...(await sql.unsafe("SELECT id FROM t ORDER BY id"))]).toEqual([{ id: 1 }, { id: 2 }]);
      },
      () => null,
    );
  });

  it("rolls back when the database reaches the COMMIT after the time it was given: a statement timeout (57014), nothing stored", async () => {
    await withTable(
      "finality_ahead_late",
      async (sql) => {
        let left = 1;
        const outcome = sql.begin(
          "isolation level read committed",
          async (tx) => {
            await tx.unsafe("SELECT 1");
            await tx.unsafe("INSERT INTO t VALUES (1)", [], { last: true });
            left = 0;
          },
          // A clock a minute behind the database's: whatever the client allows, it is too late.
          ahead(() => left),
        );
        await expect(outcome).rejects.toMatchObject({ code: "57014", message: /deadline passed/ });
        expect(await sql.unsafe("SELECT id FROM t")).toHaveLength(0);
      },
      () => Date.now() - 60_000,
    );
  });
});

// The database gone silent (frozen, or the network holding the bytes) while a COMMIT that went
// ahead is on its way: the client gives up at its deadline (its caller is told the transaction
// failed, a webhook answered 503), and the database, when it wakes, must not commit it.
describe("a COMMIT sent ahead into a silence", () => {
  async function silenced(
    name: string,
    work: (sql: ReturnType<typeof createClient>, freeze: () => void) => Promise<void>,
  ) {
    await requirePostgres("COMMIT ahead into a silence");
    const schema = await createSchemaWithTable(name);
    const applicationName = `${schema}_client`;
    const target = new URL(POSTGRES_TEST_URL);
    const proxy = await freezableProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const sql = createClient({
      url: proxy.url(POSTGRES_TEST_URL),
      schema,
      max: 1,
      applicationName,
      queryTimeoutMs: 500,
      databaseNow: () => Date.now(),
    });
    try {
      // The connection opened before the silence: only the transaction meets it.
      await sql.unsafe("SELECT 1");
      await expect(work(sql, () => proxy.freeze())).rejects.toThrow(/Query read timeout/);
      proxy.thaw();
      // The server has read everything the client sent once its session has ended (the client
      // gave the connection up): only then does an empty table say the transaction did not commit.
      await expect
        .poll(
          async () =>
            (
              await admin.unsafe<{ n: number }>(
                "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1",
                [applicationName],
              )
            )[0]?.n,
          { timeout: 10_000 },
        )
        .toBe(0);
      expect(await admin.unsafe(`SELECT id FROM "${schema}".t`)).toHaveLength(0);
    } finally {
      proxy.thaw();
      await sql.end({ timeout: 5 });
      await proxy.close();
      await dropSchema(admin, schema);
    }
  }

  it("sent after BEGIN's answer, with the last statement: not committed when the silence ends", () =>
    silenced("finality_silent_after_begin", async (sql, freeze) => {
      let left = 1;
      await sql.begin(
        "isolation level read committed",
        async (tx) => {
          await tx.unsafe("SELECT 1");
          freeze();
          await tx.unsafe("INSERT INTO t VALUES (1)", [], { last: true });
          left = 0;
        },
        { together: true, worksLeft: () => left },
      );
    }));

  it("sent in BEGIN's own write, the whole transaction at once: not committed when the silence ends", () =>
    silenced("finality_silent_whole", async (sql, freeze) => {
      let left = 1;
      freeze();
      await sql.begin(
        "isolation level read committed",
        async (tx) => {
          await tx.unsafe(`INSERT INTO t SELECT 1 WHERE ${IN_TRANSACTION}`, [], {
            withBegin: true,
            last: true,
          });
          left = 0;
        },
        { together: true, worksLeft: () => left },
      );
    }));
});
