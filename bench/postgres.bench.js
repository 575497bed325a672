/**
 * Signed-webhook ingest rate on PostgreSQL: one `finality serve` with 1, 4 and 16 client
 * connections, with and without group commit (`store.groupCommitMaxBatch: 1`), and two replicas
 * sharing the database (two wrk processes, one per replica, each with half the connections),
 * printed beside `finality serve` on SQLite and a pg-boss peer (bench/servers/pgboss-webhook-server.js:
 * the official standardwebhooks verify, one `boss.send` per webhook keyed by its delivery id) with
 * the same connection counts, in the same run, as ratios. This machine has 2 cores shared by the
 * database, the servers and wrk: read the ratios, not the absolute rates.
 *
 * At 16 connections it also prints the CPU time per webhook, the server's and the database's
 * apart, for Finality and the peer: a figure the machine's noise moves far less than the rates.
 *
 * Knobs: BENCH_PG_SECONDS (5), BENCH_PG_URL (postgres://postgres@127.0.0.1:5432/test),
 * BENCH_PG_CONNECTIONS (1,4,16), BENCH_PG_SCHEMA (finality_bench: the schemas' name prefix).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { openAdmin } from "./lib/pg-admin.js";
import { BENCH_SECRET, writePresigned } from "./lib/presign.js";
import { cpuMs, cpuMsOfAll, startServer } from "./lib/processes.js";
import { hasWrk, runWrk } from "./lib/wrk.js";

const SECONDS = Number(process.env.BENCH_PG_SECONDS ?? 5);
const CONNECTIONS = (process.env.BENCH_PG_CONNECTIONS ?? "1,4,16").split(",").map(Number);
const SCHEMA = process.env.BENCH_PG_SCHEMA ?? "finality_bench";
// Group commit is on by default; groupCommitMaxBatch 1 turns it off (one transaction per ingest).
const MODES = { off: { groupCommitMaxBatch: 1 }, on: {} };
const URL_ = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const CLI = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url));
const PGBOSS_PEER = fileURLToPath(new URL("./servers/pgboss-webhook-server.js", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "finality-bench-pg-"));

let admin;
try {
  admin = await openAdmin(URL_);
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

/** The pg-boss peer on its own schema, or null when the pg-boss dev dependency is absent. */
async function pgBossPeer(schema) {
  try {
    await import("pg-boss");
  } catch {
    return null;
  }
  return startServer(process.execPath, [PGBOSS_PEER, URL_, schema, BENCH_SECRET]);
}

async function requests(count) {
  const file = join(dir, `requests-${++serial}.tsv`);
  await writePresigned(file, { count, prefix: `pg${serial}` });
  return file;
}

// CPU per webhook, server and database apart, for the 16-connection row (cpu[mode]): what the
// machine's noise moves far less than the rate, since a slow moment slows the count and the
// CPU alike. The database's is every local `postgres` process's, whichever session it serves.
const cpu = {};

/** Requests per second with `connections` spread over `servers` (one wrk each). */
async function rate(servers, connections, cpuOf) {
  const per = Math.max(1, Math.floor(connections / servers.length));
  const files = await Promise.all(servers.map(() => requests(150_000)));
  const serverBefore = servers.reduce((sum, s) => sum + cpuMs(s.pid), 0);
  const databaseBefore = cpuMsOfAll("postgres");
  const results = await Promise.all(
    servers.map((s, i) =>
      runWrk({ url: s.url, path: "/webhooks/acme", file: files[i], seconds: SECONDS, connections: per }),
    ),
  );
  for (const r of results)
    if (r.non2xx || r.wraps) throw new Error(`bad run: ${r.non2xx} non-2xx, ${r.wraps} wraps`);
  const total = results.reduce((sum, r) => sum + r.rate, 0);
  if (cpuOf !== undefined) {
    const webhooks = total * SECONDS;
    const server = servers.reduce((sum, s) => sum + cpuMs(s.pid), 0) - serverBefore;
    cpu[cpuOf] = {
      server: (server * 1000) / webhooks,
      database: ((cpuMsOfAll("postgres") - databaseBefore) * 1000) / webhooks,
    };
  }
  return total;
}

// Interleaved: for each connection count, SQLite, PostgreSQL without group commit, PostgreSQL
// with it, one after another, so that a busy moment on this shared machine hits them alike.
const rows = [];
for (const connections of CONNECTIONS) {
  const sqlite = await serve({ sqlite: join(dir, `bench-${connections}.db`) });
  const sqliteRate = await rate([sqlite], connections);
  await sqlite.stop();
  const pgRates = {};
  for (const [mode, settings] of Object.entries(MODES)) {
    const schema = `${SCHEMA}_${process.pid}_${connections}_${mode}`;
    const pg = await serve({ postgres: URL_, schema, ...settings });
    pgRates[mode] = await rate([pg], connections, connections === 16 ? mode : undefined);
    await pg.stop();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  }
  const bossSchema = `${SCHEMA}_${process.pid}_${connections}_pgboss`;
  const boss = await pgBossPeer(bossSchema);
  const bossRate =
    boss === null ? Number.NaN : await rate([boss], connections, connections === 16 ? "boss" : undefined);
  await boss?.stop();
  await admin.query(`DROP SCHEMA IF EXISTS "${bossSchema}" CASCADE`);
  rows.push({ connections, sqliteRate, ...pgRates, bossRate });
}
const schema = `${SCHEMA}_${process.pid}_replicas`;
const first = await serve({ postgres: URL_, schema });
const second = await serve({ postgres: URL_, schema });
const replicasRate = await rate([first, second], 4);
await Promise.all([first.stop(), second.stop()]);
await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);

const fmt = (n) => Math.round(n).toLocaleString("en-US");
const x = (a, b) => `${(a / b).toFixed(2)}x`;
console.log(`${SECONDS} s per measure; webhooks/s, each a fresh signed delivery`);
if (rows.some((r) => Number.isNaN(r.bossRate))) console.log("pg-boss peer: skipped (pg-boss not installed)");
console.log(
  "connections  sqlite  pg, no group commit  pg, group commit  pg-boss peer  group/no group  group/sqlite  group/pg-boss",
);
for (const r of rows) {
  console.log(
    [
      String(r.connections).padStart(11),
      fmt(r.sqliteRate).padStart(6),
      fmt(r.off).padStart(19),
      fmt(r.on).padStart(16),
      fmt(r.bossRate).padStart(12),
      x(r.on, r.off).padStart(14),
      x(r.on, r.sqliteRate).padStart(12),
      x(r.on, r.bossRate).padStart(13),
    ].join("  "),
  );
}
// Against one replica at the same 4 connections; when 4 is not among BENCH_PG_CONNECTIONS there
// is no such figure, and a ratio to another connection count would mislead.
const four = rows.find((r) => r.connections === 4);
console.log(
  `2 replicas on PostgreSQL (group commit), 4 connections: ${fmt(replicasRate)} webhooks/s (${four === undefined ? "one replica at 4 connections not measured: add 4 to BENCH_PG_CONNECTIONS" : `${x(replicasRate, four.on)} one replica`})`,
);
const cpuLine = (label, of) =>
  of === undefined
    ? `${label}: not measured`
    : `${label}: server ${fmt(of.server)} µs + database ${fmt(of.database)} µs = ${fmt(of.server + of.database)} µs`;
console.log(
  "CPU per webhook at 16 connections (user + system, every thread; the database's every postgres process):",
);
console.log(`  ${cpuLine("pg, group commit", cpu.on)}`);
console.log(`  ${cpuLine("pg, no group commit", cpu.off)}`);
console.log(`  ${cpuLine("pg-boss peer", cpu.boss)}`);
if (cpu.on !== undefined && cpu.boss !== undefined)
  console.log(
    `  pg-boss / group commit: ${x(cpu.boss.server + cpu.boss.database, cpu.on.server + cpu.on.database)} the CPU per webhook`,
  );
await admin.end();
rmSync(dir, { recursive: true, force: true });
