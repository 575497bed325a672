import postgres from "postgres";
import { afterAll, afterEach, beforeEach } from "vitest";
import { openPostgresStore, type PostgresStore } from "../../src/store/postgres/postgres-store.js";

/** The local test server (trust auth). Override with FINALITY_TEST_DATABASE_URL. */
export const POSTGRES_TEST_URL =
  process.env.FINALITY_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/**
 * For a test file that needs PostgreSQL: whether it runs here (see postgresTestsEnabled), and an
 * admin client that is closed after the file's tests (null when PostgreSQL is not there).
 */
export async function postgresSuite(what: string): Promise<{ enabled: boolean; admin: postgres.Sql | null }> {
  const enabled = await postgresTestsEnabled(what);
  const admin = enabled ? adminClient() : null;
  afterAll(async () => {
    await admin?.end({ timeout: 5 });
  });
  return { enabled, admin };
}

/** True when the test server answers within a couple of seconds. */
export async function postgresReachable(url = POSTGRES_TEST_URL): Promise<boolean> {
  const sql = postgres(url, { max: 1, connect_timeout: 2, onnotice: () => {} });
  try {
    await sql`SELECT 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}

/**
 * Whether PostgreSQL tests run here: always in CI (where an unreachable server must fail them),
 * elsewhere only when the server answers. Says plainly when they are skipped.
 */
export async function postgresTestsEnabled(what: string): Promise<boolean> {
  if (process.env.CI) return true;
  if (await postgresReachable()) return true;
  console.warn(
    `SKIPPED: ${what} — no PostgreSQL at ${POSTGRES_TEST_URL} (start it with ` +
      "`pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start`; in CI these tests always run)",
  );
  return false;
}

let counter = 0;

/** A schema name no other test run or worker uses. */
export function uniqueSchemaName(prefix = "finality_test"): string {
  counter += 1;
  const random = Math.random().toString(36).slice(2, 8);
  return `${prefix}_${process.pid}_${counter}_${random}`;
}

/** One admin connection per test file, for dropping schemas and inspecting tables. */
export function adminClient(url = POSTGRES_TEST_URL): postgres.Sql {
  return postgres(url, { max: 2, onnotice: () => {} });
}

export async function dropSchema(sql: postgres.Sql, schema: string): Promise<void> {
  await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}

/**
 * Inside a describe: gives each test a fresh schema, and closes every store opened in it and
 * drops the schema afterwards. `open()` opens a store on the current test's schema.
 */
export function useFreshSchema(admin: postgres.Sql | null): {
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
    if (admin) await dropSchema(admin, schema);
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
