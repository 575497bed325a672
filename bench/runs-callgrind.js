#!/usr/bin/env node
/**
 * Warm instructions per run in the runs server, counted by callgrind (all threads): a run
 * claimed, started and completed as `runs.bench.js` drains them (20 `finality/worker-client`
 * workers, each end claiming the worker's next run), on SQLite and on PostgreSQL, in one run.
 * The CPU time per run that `runs.bench.js` prints moves ±10% with the machine's load; this
 * count does not, so it is the figure a change to the server's work per run is judged by.
 *
 * The server (`bench/servers/runs-server.js`) runs under `valgrind --tool=callgrind
 * --instr-atstart=no` and node `--no-concurrent-recompilation`. It drains BENCH_WARMUP runs
 * (1,500) uncounted; then BENCH_COUNTED (400) more are enqueued, `callgrind_control -i on` opens
 * the window, the workers drain them and stop, and `-i off` closes it. Enqueues are not counted.
 * The database's own work (PostgreSQL's processes) is not counted: `runs.bench.js` prints its CPU.
 *
 *   node bench/runs-callgrind.js                        # after `npm run build`
 *   BENCH_BASELINE_DIR=/path/to/old/checkout node bench/runs-callgrind.js   # adds that build
 *
 * Knobs: BENCH_WARMUP, BENCH_COUNTED, BENCH_RUN_WORKERS (20), BENCH_STORES (sqlite,postgres),
 * BENCH_POSTGRES_URL (postgres://postgres@127.0.0.1:5432/test), BENCH_BASELINE_DIR (a built
 * checkout: its bench/servers/runs-server.js is measured too, after this build's, per store),
 * BENCH_NODE_FLAGS (more node flags for the server, e.g. `--perf-basic-prof`), BENCH_KEEP_PROFILE (a
 * directory: each server's callgrind output and perf map are copied there; then
 * `BENCH_WEBHOOKS=<BENCH_COUNTED> node bench/callgrind-js.js <output> <map>` names the JavaScript
 * functions, per run). Not run by `npm run bench` (minutes under valgrind).
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { callgrindArgs, control, countedIn, requireValgrind } from "./lib/callgrind.js";
import { openAdmin } from "./lib/pg-admin.js";
import { startServer } from "./lib/processes.js";
import { drainWithWorkers } from "./lib/run-workers.js";

const WARMUP = Number(process.env.BENCH_WARMUP ?? 1500);
const COUNTED = Number(process.env.BENCH_COUNTED ?? 400);
const WORKERS = Number(process.env.BENCH_RUN_WORKERS ?? 20);
const STORES = (process.env.BENCH_STORES ?? "sqlite,postgres").split(",").map((s) => s.trim());
const PG_URL = process.env.BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const BASELINE = process.env.BENCH_BASELINE_DIR;
const here = (path) => fileURLToPath(new URL(path, import.meta.url));

requireValgrind();
console.log(
  `knobs: BENCH_WARMUP=${WARMUP} BENCH_COUNTED=${COUNTED} BENCH_RUN_WORKERS=${WORKERS} stores=${STORES.join(",")}${BASELINE ? ` baseline=${BASELINE}` : ""}`,
);

/** Enqueues `count` runs of kind `bench`, 20 at a time. */
async function enqueue(url, count) {
  let left = count;
  await Promise.all(
    Array.from({ length: 20 }, async () => {
      while (left > 0) {
        left -= 1;
        const response = await fetch(`${url}/v1/runs`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ kind: "bench", input: { n: left } }),
        });
        if (response.status !== 201) throw new Error(`enqueue answered ${response.status}`);
        await response.arrayBuffer();
      }
    }),
  );
}

/** WORKERS worker clients take the `count` runs queued; resolves with the runs handled. */
async function drain(url, count) {
  // Under valgrind an answer takes ~50× longer than natively.
  const { handled, errors } = await drainWithWorkers(url, count, {
    workers: WORKERS,
    requestTimeoutMs: 120_000,
  });
  if (errors.length > 0) console.log(`  (${errors.length} worker errors, first: ${errors[0]})`);
  return handled;
}

/** Warm instructions per run of one server on one store. */
async function measure(label, serverScript, spec) {
  const dir = mkdtempSync(join(tmpdir(), "finality-cg-runs-"));
  let server;
  try {
    const storeSpec = spec === "sqlite" ? { sqlite: join(dir, "runs.db") } : spec;
    const nodeFlags = (process.env.BENCH_NODE_FLAGS ?? "").split(/\s+/).filter(Boolean);
    server = await startServer("valgrind", [
      ...callgrindArgs(dir),
      ...nodeFlags,
      serverScript,
      JSON.stringify(storeSpec),
    ]);
    await enqueue(server.url, WARMUP);
    await drain(server.url, WARMUP);
    await enqueue(server.url, COUNTED);
    control(server.pid, "on");
    const runs = await drain(server.url, COUNTED);
    control(server.pid, "off");
    await server.stop();
    const { total, parts, files } = countedIn(dir);
    if (total === 0) throw new Error("callgrind counted nothing");
    const keep = process.env.BENCH_KEEP_PROFILE;
    if (keep) mkdirSync(keep, { recursive: true });
    for (const file of keep ? files : []) {
      copyFileSync(join(dir, file), join(keep, `${label}.${file}`));
      const map = `/tmp/perf-${file.split(".").at(-1)}.map`;
      if (existsSync(map)) copyFileSync(map, join(keep, `${label}.perf.map`));
    }
    return { total: total / runs, withoutCompiler: (total - parts.compiler) / runs, gc: parts.gc / runs };
  } finally {
    if (server?.child.exitCode === null) server.child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
}

const fmt = (n) => Math.round(n).toLocaleString("en-US");
const builds = [["this build", here("servers/runs-server.js")]];
if (BASELINE) builds.push(["baseline", join(BASELINE, "bench/servers/runs-server.js")]);
const results = {};
for (const store of STORES) {
  let spec = "sqlite";
  let admin = null;
  if (store === "postgres") {
    try {
      admin = await openAdmin(PG_URL, { connectTimeoutMs: 2000 });
    } catch (error) {
      console.log(`postgres: skipped (nothing answers at ${PG_URL}: ${error.message})`);
      continue;
    }
  }
  for (const [name, script] of builds) {
    const schema = `bench_cg_runs_${process.pid}_${Date.now()}`;
    if (store === "postgres") spec = { postgres: PG_URL, schema };
    try {
      const measured = await measure(`${store}-${name.replace(" ", "-")}`, script, spec);
      results[`${store} ${name}`] = measured;
      console.log(
        `${store.padEnd(8)} ${name.padEnd(10)} ${fmt(measured.total).padStart(12)} instructions/run (warm); without the compiler ${fmt(measured.withoutCompiler)}; GC ${fmt(measured.gc)}`,
      );
    } finally {
      if (admin !== null) await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    }
  }
  await admin?.end();
}
const ratio = (a, b) =>
  results[a] && results[b]
    ? `${(results[a].withoutCompiler / results[b].withoutCompiler).toFixed(2)}×`
    : null;
const lines = [
  ["postgres / sqlite (this build, without the compiler)", ratio("postgres this build", "sqlite this build")],
  ["this build / baseline, sqlite", ratio("sqlite this build", "sqlite baseline")],
  ["this build / baseline, postgres", ratio("postgres this build", "postgres baseline")],
];
for (const [label, value] of lines) if (value !== null) console.log(`${label}: ${value}`);
