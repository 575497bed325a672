import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { loadMigrations } from "../../src/store/migrations.js";
import { dropSchema, POSTGRES_TEST_URL, postgresSuite, uniqueSchemaName } from "../helpers/postgres.js";

// The built adapter, as a deployed replica runs it (`npm run build` produces dist/).
const BUILT = fileURLToPath(new URL("../../dist/store/postgres/postgres-store.js", import.meta.url));
const PROCESSES = 3;
const ROUNDS = 3;

// Each child imports the adapter, says "loaded", waits for "go" on stdin (so that all of them open
// the store at the same moment), opens it, and prints what it applied.
const CHILD = `
import { createPostgresStore } from ${JSON.stringify(pathToFileURL(BUILT).href)};
const [url, schema] = process.argv.slice(-2);
process.stdout.write("loaded\\n");
await new Promise((resolve) => process.stdin.once("data", resolve));
process.stdin.destroy();
const store = createPostgresStore({ url, schema, max: 2 });
try {
  const applied = await store.opened();
  process.stdout.write(JSON.stringify({ applied, ready: await store.ready() }) + "\\n");
} finally {
  await store.close();
}
`;

interface ChildResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function startChild(schema: string): {
  child: ChildProcess;
  loaded: Promise<void>;
  done: Promise<ChildResult>;
} {
  const child = spawn(
    process.execPath,
    ["--input-type=module", "-e", CHILD, "--", POSTGRES_TEST_URL, schema],
    {
      stdio: ["pipe", "pipe", "pipe"],
    },
  );
  let stdout = "";
  let stderr = "";
  let onLoaded: () => void = () => {};
  const loaded = new Promise<void>((resolve) => {
    onLoaded = resolve;
  });
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
    if (stdout.includes("loaded\n")) onLoaded();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  // A child stuck on a lock would otherwise hold the test until its timeout with no clue.
  const killer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  const done = new Promise<ChildResult>((resolve) => {
    child.on("close", (code) => {
      clearTimeout(killer);
      onLoaded();
      resolve({ code, stdout, stderr });
    });
  });
  return { child, loaded, done };
}

const { admin } = await postgresSuite("PostgreSQL migration race");
const schemas: string[] = [];

afterAll(async () => {
  for (const schema of schemas) await dropSchema(admin, schema);
});

describe("PostgreSQL migrations raced by several processes", () => {
  it.each(Array.from({ length: ROUNDS }, (_, i) => i + 1))(
    `round %i: ${PROCESSES} processes opening one fresh schema together apply each migration once`,
    async () => {
      expect(existsSync(BUILT), `${BUILT} is missing: run \`npm run build\` first`).toBe(true);
      const schema = uniqueSchemaName("finality_race");
      schemas.push(schema);
      const children = Array.from({ length: PROCESSES }, () => startChild(schema));
      await Promise.all(children.map((c) => c.loaded));
      for (const { child } of children) child.stdin?.end("go\n");
      const results = await Promise.all(children.map((c) => c.done));

      for (const result of results) {
        expect(result.stderr).toBe("");
        expect(result.code).toBe(0);
      }
      const reports = results.map(
        (r) =>
          JSON.parse(r.stdout.split("\n")[1] ?? "null") as {
            applied: number[];
            ready: boolean;
          },
      );
      const versions = loadMigrations("postgres").map((m) => m.version);
      expect(reports.every((r) => r.ready)).toBe(true);
      // Exactly one process applied them all; the others found them applied.
      expect(reports.flatMap((r) => r.applied).sort((a, b) => a - b)).toEqual(versions);
      expect(reports.filter((r) => r.applied.length > 0)).toHaveLength(1);

      const rows = await admin.unsafe(
        `SELECT version, count(*)::int AS n FROM "${schema}".schema_migrations GROUP BY version ORDER BY version`,
      );
      expect(rows.map((r) => [r.version, r.n])).toEqual(versions.map((v) => [v, 1]));
      const tables = await admin.unsafe<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name",
        [schema],
      );
      const expected = ["attempts", "deliveries", "events", "jobs", "outbox", "run_events", "runs"];
      expect(tables.map((t) => t.table_name)).toEqual(
        expect.arrayContaining([...expected, "schema_migrations"]),
      );
    },
  );
});
