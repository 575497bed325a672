import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import { createClient, type Sql } from "../../src/store/postgres/postgres-client.js";
import { openPostgresStore, type PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { requireServer } from "./services.js";

/** The local test server (trust auth). Override with FINALITY_TEST_DATABASE_URL. */
export const POSTGRES_TEST_URL =
  process.env.FINALITY_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/**
 * For a test file that needs PostgreSQL: every test in the file fails (never skips) when the
 * server does not answer, with the command that starts it; and an admin client, closed after the
 * file's tests. `what` names the tests in the failure.
 */
export async function postgresSuite(what: string): Promise<{ admin: Sql }> {
  beforeAll(() => requirePostgres(what));
  const admin = adminClient();
  afterAll(async () => {
    await admin.end({ timeout: 5 });
  });
  return { admin };
}

/**
 * Fails (throws ServiceMissing) unless the test server accepts connections: a TCP connect, which
 * 127.0.0.1 refuses at once, so a missing server costs no timeout. Call it first in a test (or a
 * beforeAll) that needs PostgreSQL; never turn its answer into a skip.
 */
export async function requirePostgres(what: string, url = POSTGRES_TEST_URL): Promise<void> {
  try {
    await requireServer("PostgreSQL", url, 5432);
  } catch (error) {
    if (error instanceof Error) error.message = `${what}: ${error.message}`;
    throw error;
  }
}

let counter = 0;

/** A schema name no other test run or worker uses. */
export function uniqueSchemaName(prefix = "finality_test"): string {
  counter += 1;
  const random = Math.random().toString(36).slice(2, 8);
  return `${prefix}_${process.pid}_${counter}_${random}`;
}

/**
 * One admin pool per test file, for dropping schemas and inspecting tables: the store's own
 * driver wrapper (node-postgres), with the server-side timeouts off, since a test may hold a lock
 * on purpose for as long as it needs.
 */
export function adminClient(url = POSTGRES_TEST_URL): Sql {
  return createClient({
    url,
    max: 2,
    applicationName: "finality-test-admin",
    statementTimeoutMs: 0,
    lockTimeoutMs: 0,
    idleInTransactionTimeoutMs: 0,
    queryTimeoutMs: Number.POSITIVE_INFINITY,
  });
}

export async function dropSchema(sql: Sql, schema: string): Promise<void> {
  await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}

/**
 * Inside a describe: gives each test a fresh schema, and closes every store opened in it and
 * drops the schema afterwards. `open()` opens a store on the current test's schema.
 */
export function useFreshSchema(admin: Sql): {
  open(): Promise<PostgresStore>;
  schema(): string;
} {
  let schema = "";
  let stores: PostgresStore[] = [];
  beforeEach(() => {
    schema = uniqueSchemaName();
  });
  afterEach(async () => {
    for (const store of stores) await store.close();
    stores = [];
    await dropSchema(admin, schema);
  });
  return {
    schema: () => schema,
    async open() {
      const store = await openPostgresStore({ url: POSTGRES_TEST_URL, schema, max: 4 });
      stores.push(store);
      return store;
    },
  };
}

/** How many sessions named `applicationName` are waiting for a lock right now. */
export async function lockWaiters(admin: Sql, applicationName: string): Promise<number | undefined> {
  const [row] = await admin.unsafe<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'",
    [applicationName],
  );
  return row?.n;
}
