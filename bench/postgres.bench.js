/**
 * Signed-webhook ingest rate on PostgreSQL: one `finality serve` with 1, 2 and 4 client
 * connections, and two replicas sharing the database (two wrk processes, one per replica, each
 * with half the connections), printed beside `finality serve` on SQLite with the same connection
 * counts, in the same run. This machine has 2 cores shared by the database, the servers and wrk:
 * read the ratios, not the absolute rates.
 *
 * Knobs: BENCH_PG_SECONDS (5), BENCH_PG_URL (postgres://postgres@127.0.0.1:5432/test).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { BENCH_SECRET, writePresigned } from "./lib/presign.js";
import { startServer } from "./lib/processes.js";
import { hasWrk, runWrk } from "./lib/wrk.js";

const SECONDS = Number(process.env.BENCH_PG_SECONDS ?? 5);
const URL_ = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const CLI = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "finality-bench-pg-"));
const admin = postgres(URL_, { max: 1, onnotice: () => {} });

try {
  await admin`SELECT 1`;
} catch {
  console.log(`SKIPPED: no PostgreSQL at ${URL_}`);
  process.exit(0);
}
if (!hasWrk()) {
  console.log("SKIPPED: wrk is not installed (Debian: apt-get install -y wrk)");
  process.exit(0);
}

let serial = 0;
async function serve(store) {
  const config = join(dir, `config-${++serial}.json`);
  writeFileSync(
    config,
    JSON.stringify({ store, providers: { acme: { type: "generic", webhook: { secrets: [BENCH_SECRET] } } } }),
  );
  return startServer(process.execPath, [CLI, "serve", "--config", config, "--port", "0"], {
    FINALITY_LOG_LEVEL: "warn",
  });
}

async function requests(count) {
  const file = join(dir, `requests-${++serial}.tsv`);
  await writePresigned(file, { count, prefix: `pg${serial}` });
  return file;
}

/** Requests per second with `connections` spread over `servers` (one wrk each). */
async function rate(servers, connections) {
  const per = Math.max(1, Math.floor(connections / servers.length));
  const files = await Promise.all(servers.map(() => requests(150_000)));
  const results = await Promise.all(
    servers.map((s, i) =>
      runWrk({ url: s.url, path: "/webhooks/acme", file: files[i], seconds: SECONDS, connections: per }),
    ),
  );
  for (const r of results)
    if (r.non2xx || r.wraps) throw new Error(`bad run: ${r.non2xx} non-2xx, ${r.wraps} wraps`);
  return results.reduce((sum, r) => sum + r.rate, 0);
}

const rows = [];
for (const connections of [1, 2, 4]) {
  const sqlite = await serve({ sqlite: join(dir, `bench-${connections}.db`) });
  const sqliteRate = await rate([sqlite], connections);
  await sqlite.stop();
  const schema = `finality_bench_${process.pid}_${connections}`;
  const pg = await serve({ postgres: URL_, schema });
  const pgRate = await rate([pg], connections);
  await pg.stop();
  rows.push({ connections, sqliteRate, pgRate });
  await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}
const schema = `finality_bench_${process.pid}_replicas`;
const first = await serve({ postgres: URL_, schema });
const second = await serve({ postgres: URL_, schema });
const replicasRate = await rate([first, second], 4);
await Promise.all([first.stop(), second.stop()]);
await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);

const fmt = (n) => Math.round(n).toLocaleString("en-US");
console.log(`${SECONDS} s per measure; webhooks/s, each a fresh signed delivery`);
console.log("connections  sqlite  postgres  postgres/sqlite");
for (const r of rows) {
  console.log(
    `${String(r.connections).padStart(11)}  ${fmt(r.sqliteRate).padStart(6)}  ${fmt(r.pgRate).padStart(8)}  ${(r.pgRate / r.sqliteRate).toFixed(2).padStart(15)}`,
  );
}
const one = rows.at(-1).pgRate;
console.log(
  `2 replicas on PostgreSQL, 4 connections: ${fmt(replicasRate)} webhooks/s (${(replicasRate / one).toFixed(2)}x one replica)`,
);
await admin.end();
rmSync(dir, { recursive: true, force: true });
