/**
 * postgres.js against node-postgres (`pg`) on what a database fault does to a Finality replica,
 * each driver in a child process (bench/lib/driver-workload.js) running the shape of an ingest
 * transaction at concurrency 16 on a pool of 10:
 *
 * - cuts: CUTS rounds of `pg_terminate_backend` on that child's backends only (by
 *   application_name), 150 ms apart, under load; then whether every pooled connection answers;
 * - restart: a full restart of a throwaway cluster (never the shared server) under load, RESTARTS
 *   times; then the same pool check;
 * - throughput: committed transactions per second over SECONDS on the shared server, no faults.
 *
 * It reports whether the loaded postgres.js carries Finality's guard (patches/), so a run before
 * and after the patch can be told apart. Prints; not a test.
 * Knobs: BENCH_PG_URL, BENCH_DRIVER_SECONDS (5), BENCH_DRIVER_CUTS (20), BENCH_DRIVER_RESTARTS (3),
 * BENCH_DRIVER_TRIALS (3).
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { startThrowawayPostgres, throwawayPostgresUnavailable } from "../test/helpers/throwaway-postgres.mjs";

const URL_ = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const SECONDS = Number(process.env.BENCH_DRIVER_SECONDS ?? 5);
const CUTS = Number(process.env.BENCH_DRIVER_CUTS ?? 20);
const RESTARTS = Number(process.env.BENCH_DRIVER_RESTARTS ?? 3);
const TRIALS = Number(process.env.BENCH_DRIVER_TRIALS ?? 3);
const DRIVERS = (process.env.BENCH_DRIVERS ?? "postgres.js,pg").split(",");
const WORKLOAD = fileURLToPath(new URL("./lib/driver-workload.js", import.meta.url));
const require = createRequire(import.meta.url);
const postgresDir = require.resolve("postgres").replace(/cjs\/src\/index\.js$/, "");
const guarded = readFileSync(`${postgresDir}src/connection.js`, "utf8").includes("finality:");
const postgresVersion = JSON.parse(readFileSync(`${postgresDir}package.json`, "utf8")).version;
const versions = {
  "postgres.js": `${postgresVersion}${guarded ? " + Finality guard" : " (unpatched)"}`,
  pg: require("pg/package.json").version,
};

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let serial = 0;

async function schemaOn(url) {
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  const schema = `bench_driver_${process.pid}_${++serial}`;
  await admin.unsafe(`CREATE SCHEMA ${schema}`);
  await admin.unsafe(`CREATE TABLE ${schema}.deliveries (id text PRIMARY KEY);
    CREATE TABLE ${schema}.jobs (id text PRIMARY KEY, version int NOT NULL, body jsonb NOT NULL);
    CREATE TABLE ${schema}.events (no bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, job_id text NOT NULL, at timestamptz NOT NULL, body jsonb NOT NULL)`);
  return { admin, schema, drop: () => admin.unsafe(`DROP SCHEMA ${schema} CASCADE`).then(() => admin.end()) };
}

function child(driver, url, schema, app) {
  const proc = spawn(process.execPath, [WORKLOAD], {
    env: { ...process.env, DRIVER: driver, URL: url, SCHEMA: schema, APP: app },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  proc.stderr.on("data", (d) => {
    stderr += d.toString();
  });
  const exit = new Promise((resolve) => proc.on("exit", (code, signal) => resolve({ code, signal })));
  const lines = createInterface({ input: proc.stdout })[Symbol.asyncIterator]();
  return {
    exit,
    stderr: () => stderr,
    alive: () => proc.exitCode === null && proc.signalCode === null,
    async ask(command) {
      proc.stdin.write(`${command}\n`);
      const next = await Promise.race([lines.next(), exit.then(() => ({ done: true }))]);
      return next.done ? null : JSON.parse(next.value);
    },
    kill: () => proc.kill("SIGKILL"),
  };
}

function crashLine(text) {
  return (
    text
      .split("\n")
      .find((l) => /Error/.test(l))
      ?.trim() ?? text.trim().slice(0, 120)
  );
}

async function cuts(driver) {
  const db = await schemaOn(URL_);
  const app = `bench-driver-${driver}-${process.pid}-${serial}`;
  const c = child(driver, URL_, db.schema, app);
  await c.ask("go 16");
  let terminated = 0;
  for (let i = 0; i < CUTS && c.alive(); i++) {
    await sleep(150);
    const rows =
      await db.admin`SELECT count(*)::int AS n FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = ${app}) t`;
    terminated += rows[0].n;
  }
  await sleep(300);
  const result = await finish(c);
  await db.drop();
  return { ...result, terminated };
}

async function restart(driver) {
  const cluster = await startThrowawayPostgres();
  try {
    const db = await schemaOn(cluster.url);
    await db.admin.end();
    const c = child(driver, cluster.url, db.schema, `bench-driver-${driver}`);
    await c.ask("go 16");
    for (let i = 0; i < RESTARTS && c.alive(); i++) {
      await sleep(500);
      cluster.restart();
    }
    await sleep(1000);
    return await finish(c);
  } finally {
    cluster.remove();
  }
}

// A loop whose transaction never settles (a poisoned connection) shows as a halt that never answers.
const HUNG = { hung: true };
const within = (promise, ms) => Promise.race([promise, sleep(ms).then(() => HUNG)]);

async function finish(c) {
  const work = c.alive() ? await within(c.ask("halt"), 15_000) : null;
  const health = c.alive() && work !== HUNG ? await within(c.ask("health"), 20_000) : null;
  if (c.alive() && health !== HUNG && health !== null) await c.ask("quit");
  const exit = await Promise.race([
    c.exit,
    sleep(5000).then(() => {
      c.kill();
      return { code: "killed" };
    }),
  ]);
  const crash = work === null ? crashLine(c.stderr()) : work === HUNG ? "transactions never settled" : null;
  return {
    survived: work !== null && health !== null,
    hung: work === HUNG || health === HUNG,
    exit,
    crash,
    work,
    health,
  };
}

async function throughput(driver) {
  const db = await schemaOn(URL_);
  const c = child(driver, URL_, db.schema, `bench-driver-${driver}`);
  await c.ask("go 16");
  await sleep(SECONDS * 1000);
  const work = await c.ask("halt");
  await c.ask("quit");
  await c.exit;
  await db.drop();
  return work.committed / SECONDS;
}

function summary(label, results) {
  const survived = results.filter((r) => r.survived).length;
  const healthy = results.filter((r) => r.health?.ok).length;
  const firstTry = results.filter((r) => r.health?.first?.ok).length;
  const hung = results.filter((r) => r.hung).length;
  const crashes = [...new Set(results.filter((r) => !r.survived).map((r) => r.crash))];
  const errors = {};
  for (const r of results)
    for (const [k, v] of Object.entries(r.work?.errors ?? {})) errors[k] = (errors[k] ?? 0) + v;
  console.log(
    `  ${label}: process survived ${survived}/${results.length}; hung ${hung}/${results.length}; every pooled connection usable within 3 checks ${healthy}/${results.length} (at the first ${firstTry})` +
      (crashes.length ? `; crashed with: ${crashes.join(" | ")}` : "") +
      `; committed ${results.map((r) => r.work?.committed ?? "-").join("/")}, failed ${results.map((r) => r.work?.failed ?? "-").join("/")}` +
      (results.some((r) => r.terminated !== undefined)
        ? `; backends terminated ${results.map((r) => r.terminated).join("/")}`
        : "") +
      `; errors seen ${JSON.stringify(errors)}`,
  );
}

try {
  const probe = postgres(URL_, { max: 1, onnotice: () => {}, connect_timeout: 2 });
  await probe`SELECT 1`;
  await probe.end();
} catch {
  console.log(`SKIPPED: no PostgreSQL at ${URL_}`);
  process.exit(0);
}
const noCluster = throwawayPostgresUnavailable();
for (const driver of DRIVERS) {
  console.log(`${driver} ${versions[driver]}`);
  const cut = [];
  for (let t = 0; t < TRIALS; t++) cut.push(await cuts(driver));
  summary(`${CUTS} rounds of pg_terminate_backend under load, ${TRIALS} trials`, cut);
  if (noCluster) console.log(`  restart: SKIPPED (${noCluster})`);
  else {
    const restarts = [];
    for (let t = 0; t < TRIALS; t++) restarts.push(await restart(driver));
    summary(`${RESTARTS} full server restarts under load, ${TRIALS} trials`, restarts);
  }
}
// Interleaved, so that a change in the machine's load (it is shared) hits both drivers alike.
const rates = Object.fromEntries(DRIVERS.map((d) => [d, []]));
for (let t = 0; t < TRIALS; t++) for (const driver of DRIVERS) rates[driver].push(await throughput(driver));
for (const driver of DRIVERS) {
  const sorted = [...rates[driver]].sort((a, b) => a - b);
  console.log(
    `${driver} throughput: ${rates[driver].map((r) => r.toFixed(0)).join(" / ")} transactions/s in run order (median ${sorted[Math.floor(sorted.length / 2)].toFixed(0)}) over ${SECONDS} s at concurrency 16`,
  );
}
