/**
 * Runs on your own workers: claims + completions per second with 20 concurrent worker clients
 * (the `finality/worker-client` client, one run at a time each) against `runs-server.js` in its own
 * process over loopback. While runs are queued, each costs one call: the worker client's end
 * claims its next run (`next`, started by the claim). The runs are enqueued first (timed too), so
 * the measure is the drain: claim, start, complete.
 *
 * Then, when PostgreSQL answers at BENCH_POSTGRES_URL: the same server on the PostgreSQL store,
 * and pg-boss (a queue users would otherwise pick) with 20 concurrent fetch → complete loops
 * talking to PostgreSQL directly (no HTTP hop: its best case). Ratios are printed.
 *
 * Beside each rate, the CPU time per run spent during the drain (user + system): the server's, the
 * database's (every local `postgres` process) and the worker clients' (this process). On a machine
 * whose cores are all busy the rate is bounded by the sum, and a server's own profile shows time it
 * waited for a core (a wakeup of the database preempting it in `writev`) as its own.
 *
 * Knobs: BENCH_RUNS (default 3000), BENCH_RUN_WORKERS (default 20),
 * BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/test), BENCH_FEED_READER=1 (a
 * reader follows the settlement feed through the drain, as a settlement stream's consumer would:
 * on PostgreSQL it is the reader that numbers settlements, migration 0016), BENCH_NODE_FLAGS (given to
 * the server's node, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof").
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openAdmin } from "./lib/pg-admin.js";
import { cpuMs, cpuMsOfAll, startServer } from "./lib/processes.js";
import { drainWithWorkers } from "./lib/run-workers.js";
import { fmt } from "./lib/stats.js";

const RUNS = Number(process.env.BENCH_RUNS ?? 3000);
const WORKERS = Number(process.env.BENCH_RUN_WORKERS ?? 20);
const PG_URL = process.env.BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const FEED_READER = process.env.BENCH_FEED_READER === "1";
const NODE_FLAGS = (process.env.BENCH_NODE_FLAGS ?? "").split(" ").filter(Boolean);
console.log(
  `runs: ${RUNS}; worker clients: ${WORKERS}; BENCH_POSTGRES_URL=${PG_URL}; feed reader: ${FEED_READER ? "on" : "off"}`,
);

const seconds = (started) => Number(process.hrtime.bigint() - started) / 1e9;

/** Enqueues RUNS runs over HTTP, 50 at a time; returns enqueues per second. */
async function enqueueAll(url) {
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      while (next < RUNS) {
        next += 1;
        const response = await fetch(`${url}/v1/runs`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ kind: "bench", input: { n: next } }),
        });
        if (response.status !== 201) throw new Error(`enqueue answered ${response.status}`);
        await response.arrayBuffer();
      }
    }),
  );
  return RUNS / seconds(started);
}

/** 20 worker clients drain the queue; resolves with runs (claim + completion) per second. */
async function drain(url, serverPid) {
  let cpu;
  let started;
  let draining = true;
  let reading = Promise.resolve(0);
  const { errors } = await drainWithWorkers(url, RUNS, {
    workers: WORKERS,
    onStart: () => {
      cpu = cpuBefore(serverPid);
      started = process.hrtime.bigint();
      if (FEED_READER) reading = followFeed(url, () => draining);
    },
  });
  const elapsed = seconds(started);
  const used = cpu.perRun();
  draining = false;
  if (errors.length > 0) console.log(`  (${errors.length} client errors, first: ${errors[0]})`);
  if (FEED_READER) console.log(`  the feed reader saw ${await reading} settlements during the drain`);
  return { rate: RUNS / elapsed, cpu: used };
}

/**
 * CPU time used from now on, per run, in µs: the server's (a pid; null for none), the database's
 * (every `postgres` process on this machine) and this process's (the worker clients).
 */
function cpuBefore(serverPid) {
  const server = serverPid === null ? 0 : cpuMs(serverPid);
  const database = cpuMsOfAll("postgres");
  const clients = process.cpuUsage();
  return {
    perRun: () => {
      const own = process.cpuUsage(clients);
      return {
        server: serverPid === null ? 0 : ((cpuMs(serverPid) - server) * 1000) / RUNS,
        database: ((cpuMsOfAll("postgres") - database) * 1000) / RUNS,
        clients: (own.user + own.system) / RUNS,
      };
    },
  };
}

const cpuLine = ({ server, database, clients }) =>
  `CPU per run in the drain: server ${fmt(server, 0)} µs, database ${fmt(database, 0)} µs, worker clients ${fmt(clients, 0)} µs; total ${fmt(server + database + clients, 0)} µs`;

/** Long-polls the settlement feed from its start while `going()`; resolves with how many it read. */
async function followFeed(url, going) {
  let after = "";
  let seen = 0;
  while (going()) {
    const response = await fetch(`${url}/v1/settlements?limit=1000&wait=1${after ? `&after=${after}` : ""}`);
    if (!response.ok) throw new Error(`the settlement feed answered ${response.status}`);
    const page = await response.json();
    seen += page.items.length;
    after = page.cursor ?? "";
  }
  return seen;
}

async function finalityOn(label, spec) {
  const server = await startServer(process.execPath, [
    ...NODE_FLAGS,
    new URL("./servers/runs-server.js", import.meta.url).pathname,
    JSON.stringify(spec),
  ]);
  try {
    const enqueues = await enqueueAll(server.url);
    const { rate, cpu } = await drain(server.url, server.pid);
    console.log(
      `finality (${label}): ${fmt(rate, 0)} runs/s claimed+completed; ${fmt(enqueues, 0)} enqueues/s`,
    );
    console.log(`  ${cpuLine(cpu)}`);
    return { rate, cpu };
  } finally {
    await server.stop();
  }
}

async function pgBoss(schema) {
  let PgBoss;
  try {
    PgBoss = (await import("pg-boss")).default;
  } catch {
    console.log("pg-boss: skipped (the pg-boss dev dependency is not installed)");
    return null;
  }
  const boss = new PgBoss({
    connectionString: PG_URL,
    schema,
    max: WORKERS,
    supervise: false,
    schedule: false,
  });
  boss.on("error", (error) => console.log(`  pg-boss error: ${error.message}`));
  await boss.start();
  try {
    await boss.createQueue("bench");
    for (let i = 0; i < RUNS; i += 1000) {
      const jobs = Array.from({ length: Math.min(1000, RUNS - i) }, (_, j) => ({
        name: "bench",
        data: { n: i + j },
      }));
      await boss.insert(jobs);
    }
    let completed = 0;
    const cpu = cpuBefore(null);
    const started = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: WORKERS }, async () => {
        while (completed < RUNS) {
          const [job] = await boss.fetch("bench");
          if (job === undefined) continue;
          await boss.complete("bench", job.id, { n: job.data.n });
          completed += 1;
        }
      }),
    );
    const rate = RUNS / seconds(started);
    const used = cpu.perRun();
    const { version } = createRequire(import.meta.url)("pg-boss/package.json");
    console.log(`pg-boss ${version}: ${fmt(rate, 0)} jobs/s fetched+completed (direct SQL, no HTTP hop)`);
    console.log(`  ${cpuLine(used)}`);
    return { rate, cpu: used };
  } finally {
    await boss.stop({ graceful: false, wait: true });
  }
}

async function postgresReachable() {
  try {
    return await openAdmin(PG_URL, { connectTimeoutMs: 2000 });
  } catch (error) {
    console.log(`PostgreSQL: skipped (nothing answers at ${PG_URL}: ${error.message})`);
    return null;
  }
}

const dir = mkdtempSync(join(tmpdir(), "finality-bench-runs-"));
try {
  const sqlite = await finalityOn("SQLite", { sqlite: join(dir, "runs.db") });
  const admin = await postgresReachable();
  if (admin !== null) {
    const suffix = `${process.pid}_${Date.now()}`;
    const schemas = [`bench_runs_${suffix}`, `bench_pgboss_${suffix}`];
    try {
      let postgres = null;
      try {
        postgres = await finalityOn("PostgreSQL", { postgres: PG_URL, schema: schemas[0] });
      } catch (error) {
        console.log(`finality (PostgreSQL): skipped (${error.message.split("\n")[0]})`);
      }
      const boss = await pgBoss(schemas[1]);
      if (boss !== null) {
        console.log(`ratio finality (SQLite) / pg-boss: ${fmt(sqlite.rate / boss.rate, 2)}`);
        if (postgres !== null) {
          console.log(`ratio finality (PostgreSQL) / pg-boss: ${fmt(postgres.rate / boss.rate, 2)}`);
          const total = ({ server, database, clients }) => server + database + clients;
          console.log(
            `CPU per run, finality (PostgreSQL) / pg-boss: ${fmt(total(postgres.cpu) / total(boss.cpu), 2)} (database alone: ${fmt(postgres.cpu.database / boss.cpu.database, 2)})`,
          );
        }
      }
    } finally {
      for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
