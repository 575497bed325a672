#!/usr/bin/env node
/**
 * Warm instructions per webhook, counted by callgrind in each server process (all threads), for
 * bare node:http, the hand-rolled design, the floor (bench/servers/floor-server.js) and
 * `finality serve` (SQLite, NORMAL, default log level), in one run: issue 29's method.
 *
 * Each server runs under `valgrind --tool=callgrind --instr-atstart=no` and node
 * `--no-concurrent-recompilation` (V8 compiles on the main thread, so tier-up happens during the
 * warm-up, not in the window). It receives BENCH_WARMUP signed webhooks (12,000) uncounted, then
 * `callgrind_control -i on` opens the window for BENCH_WEBHOOKS (3,000), and `-i off` closes it.
 * 16 in flight over keep-alive, one in three terminal (running seq 1, running seq 2, succeeded
 * seq 3 per job, jobs interleaved in blocks), every delivery id and job id unique.
 * Instructions do not depend on the machine's load, unlike req/s.
 *
 *   node bench/intake-callgrind.js                 # after `npm run build`
 *   BENCH_BASELINE_DIST=/path/to/old/dist node bench/intake-callgrind.js   # adds that build
 *
 * Knobs: BENCH_WARMUP (12000), BENCH_WEBHOOKS (3000), BENCH_IN_FLIGHT (16), BENCH_RUNS (3: each
 * server that many times, interleaved, and the median printed), BENCH_SERVERS
 * (comma list of bare,hand-rolled,floor,finality,baseline), BENCH_BASELINE_DIST,
 * BENCH_LOG_LEVEL (unset: the service's default), BENCH_KEEP_PROFILE (a directory: each server's
 * callgrind output is copied there, for callgrind_annotate), BENCH_EFFECT (1: finality and the
 * baseline with an effect on `succeeded`, delivered over HTTP to a bare receiver outside valgrind,
 * as webhooks.bench.js's "finality" design: the dispatcher's work is counted per webhook too),
 * BENCH_NODE_FLAGS (more node flags for every server, e.g. `--perf-basic-prof`: with
 * BENCH_KEEP_PROFILE, bench/callgrind-js.js then names the JavaScript functions in the profile),
 * BENCH_STORE (`postgres`: finality and the baseline on PostgreSQL at BENCH_POSTGRES_URL, each in a
 * fresh schema dropped after it, instead of SQLite; the database's own work is not counted, the
 * server's is: compare it with the SQLite figure of the same build, and builds with each other),
 * BENCH_TOOL (`strace`: system calls per webhook instead, by name, from `strace -c -f` attached to
 * the server for the same window; the kernel's side, which callgrind does not count. Needs strace;
 * the server runs under node alone).
 * Not run by `npm run bench` (minutes under valgrind).
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { signStandardWebhook } from "../dist/webhooks/schemes/standard-webhooks/node.js";
import { callgrindArgs, control, countedIn, requireValgrind } from "./lib/callgrind.js";
import { jobSteps } from "./lib/job-steps.js";
import { openAdmin } from "./lib/pg-admin.js";
import { BENCH_SECRET } from "./lib/presign.js";
import { startServer } from "./lib/processes.js";
import { attachStrace, requireStrace } from "./lib/strace.js";

const WARMUP = Number.parseInt(process.env.BENCH_WARMUP ?? "12000", 10);
const COUNT = Number.parseInt(process.env.BENCH_WEBHOOKS ?? "3000", 10);
const IN_FLIGHT = Number.parseInt(process.env.BENCH_IN_FLIGHT ?? "16", 10);
const RUNS = Number.parseInt(process.env.BENCH_RUNS ?? "3", 10);
const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const baselineDist = process.env.BENCH_BASELINE_DIST;
const onPostgres = process.env.BENCH_STORE === "postgres";
const PG_URL = process.env.BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
if (process.env.BENCH_STORE !== undefined && !onPostgres) {
  throw new Error(`BENCH_STORE=${process.env.BENCH_STORE}: only "postgres" is known (SQLite is the default)`);
}
// The schemas' admin connection: each PostgreSQL measure gets a fresh one, dropped after it.
const admin = onPostgres ? await openAdmin(PG_URL) : null;
let schemas = 0;
const measureSchema = new Map(); // a measure's directory → its schema

const servers = {
  bare: () => [here("servers/bare-server.js")],
  "hand-rolled": (dir) => [here("servers/hand-rolled-server.js"), join(dir, "h.db"), "NORMAL", BENCH_SECRET],
  floor: (dir) => [here("servers/floor-server.js"), join(dir, "f.db"), "NORMAL", BENCH_SECRET],
  finality: (dir) => finalityArgs(dir, here("../dist")),
  baseline: (dir) => finalityArgs(dir, baselineDist),
};
const chosen = (
  process.env.BENCH_SERVERS ??
  // The designs beside Finality are SQLite's: on PostgreSQL, builds are compared with each other.
  `${onPostgres ? "" : "bare,hand-rolled,floor,"}finality${baselineDist ? ",baseline" : ""}`
)
  .split(",")
  .map((name) => name.trim());

const underStrace = process.env.BENCH_TOOL === "strace";
if (process.env.BENCH_TOOL !== undefined && !underStrace) {
  throw new Error(`BENCH_TOOL=${process.env.BENCH_TOOL}: only "strace" is known (callgrind is the default)`);
}
if (underStrace) requireStrace();
else requireValgrind();
const unit = underStrace ? "system calls/webhook" : "instructions/webhook (warm)";
// Where the effect is delivered (BENCH_EFFECT): a bare server, not counted.
const receiver = process.env.BENCH_EFFECT
  ? await startServer(process.execPath, [here("servers/bare-server.js")])
  : null;
console.log(
  `knobs: BENCH_STORE=${onPostgres ? "postgres" : "sqlite"} BENCH_EFFECT=${receiver ? 1 : 0} BENCH_WARMUP=${WARMUP} BENCH_WEBHOOKS=${COUNT} BENCH_IN_FLIGHT=${IN_FLIGHT} BENCH_RUNS=${RUNS} servers=${chosen.join(",")}`,
);

// Runs are interleaved (every server once, then again), and each server's figure is the median of
// its runs: tier-up and a major collection inside the window move one run by ±100k, not the median.
const perWebhook = {};
const withoutCompiler = {};
const runs = Object.fromEntries(chosen.map((name) => [name, []]));
let resent = 0;
let resentWhy = ""; // the last resend's reason
for (let run = 1; run <= RUNS; run++) {
  if (RUNS > 1) console.log(`run ${run} of ${RUNS}`);
  for (const name of chosen) {
    const measured = await measure(name, servers[name]);
    runs[name].push(measured);
    console.log(`  ${name.padEnd(12)} ${fmt(measured.total).padStart(10)} ${unit}`);
  }
}
for (const name of chosen) {
  perWebhook[name] = median(runs[name].map((r) => r.total));
  withoutCompiler[name] = median(runs[name].map((r) => r.withoutCompiler));
}
if (RUNS > 1) {
  console.log(`median of ${RUNS} runs (total; without the compiler; SQLite)`);
  for (const name of chosen) {
    const sqlite = median(runs[name].map((r) => r.sqlite));
    console.log(
      `  ${name.padEnd(12)} ${fmt(perWebhook[name]).padStart(10)}  ${fmt(withoutCompiler[name]).padStart(10)}  ${fmt(sqlite).padStart(8)}`,
    );
  }
}
const ratio = (a, b, of = perWebhook) => (of[a] && of[b] ? `${(of[a] / of[b]).toFixed(2)}×` : "n/a");
if (!onPostgres) {
  console.log(`  finality/floor ${ratio("finality", "floor")}   finality/bare ${ratio("finality", "bare")}`);
  console.log(`  without the compiler: finality/floor ${ratio("finality", "floor", withoutCompiler)}`);
  console.log(`  floor/bare ${ratio("floor", "bare")}   hand-rolled/bare ${ratio("hand-rolled", "bare")}`);
}
if (baselineDist) {
  console.log(
    `  finality/baseline ${ratio("finality", "baseline")} (without the compiler ${ratio("finality", "baseline", withoutCompiler)})`,
  );
}

await receiver?.stop();
await admin?.end();

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function fmt(n) {
  // System calls per webhook are a few: two decimals; instructions, whole.
  return underStrace ? n.toFixed(2) : Math.round(n).toLocaleString("en-US");
}

function finalityArgs(dir, dist) {
  const config = join(dir, "finality.config.json");
  const effects = receiver
    ? [{ name: "notify", url: receiver.url, secret: BENCH_SECRET, on: ["succeeded"] }]
    : [];
  writeFileSync(
    config,
    JSON.stringify({
      providers: { acme: { type: "generic", webhook: { secrets: [BENCH_SECRET] } } },
      effects,
      ...(onPostgres ? { store: { postgres: PG_URL, schema: schemaOf(dir) } } : {}),
    }),
  );
  const store = onPostgres ? [] : ["--db", join(dir, "f.db")];
  return [join(dist, "cli/main.js"), "serve", "--config", config, "--port", "0", ...store];
}

/** The PostgreSQL schema of the measure whose directory is `dir` (made once per measure). */
function schemaOf(dir) {
  const name = `finality_cg_${process.pid}_${++schemas}`;
  measureSchema.set(dir, name);
  return name;
}

/** Warm instructions per webhook of one server: the window's total over COUNT. */
async function measure(name, argsOf) {
  resent = 0;
  const dir = mkdtempSync(join(tmpdir(), `finality-cg-${name}-`));
  let server;
  try {
    const env = { FINALITY_SQLITE_SYNCHRONOUS: "NORMAL" };
    if (process.env.BENCH_LOG_LEVEL) env.FINALITY_LOG_LEVEL = process.env.BENCH_LOG_LEVEL;
    server = await startServer(
      underStrace ? process.execPath : "valgrind",
      [
        ...(underStrace ? [] : callgrindArgs(dir)),
        ...(process.env.BENCH_NODE_FLAGS ?? "").split(/\s+/).filter(Boolean),
        ...argsOf(dir),
      ],
      env,
    );
    const webhooks = bodies(name, WARMUP + COUNT);
    const warmAgent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
    await send(server.url, webhooks.slice(0, WARMUP), warmAgent);
    warmAgent.destroy();
    // Fresh connections for the window: callgrind_control can take longer than a server's
    // keep-alive timeout, and a socket it closed meanwhile would be reset under the client.
    const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
    if (underStrace) {
      const tracer = await attachStrace(server.pid, dir);
      await send(server.url, webhooks.slice(WARMUP), agent);
      const calls = await tracer.detach();
      agent.destroy();
      await server.stop();
      const total = Object.values(calls).reduce((a, b) => a + b, 0);
      const top = Object.entries(calls)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 8)
        .map(([call, n]) => `${call} ${fmt(n / COUNT)}`);
      console.log(`  (${name}: ${top.join(", ")})`);
      return { total: total / COUNT, withoutCompiler: total / COUNT, sqlite: 0 };
    }
    control(server.pid, "on");
    await send(server.url, webhooks.slice(WARMUP), agent);
    control(server.pid, "off");
    agent.destroy();
    if (resent > 0) console.log(`  (${name}: ${resent} requests resent; the last after ${resentWhy})`);
    await server.stop();
    const { total, parts, files } = countedIn(dir);
    for (const file of files) {
      if (process.env.BENCH_KEEP_PROFILE) {
        mkdirSync(process.env.BENCH_KEEP_PROFILE, { recursive: true });
        copyFileSync(join(dir, file), join(process.env.BENCH_KEEP_PROFILE, `${name}.${file}`));
        // --perf-basic-prof's map of the JIT's code, for bench/callgrind-js.js.
        const pid = file.split(".").at(-1);
        const map = `/tmp/perf-${pid}.map`;
        if (existsSync(map))
          copyFileSync(map, join(process.env.BENCH_KEEP_PROFILE, `${name}.perf-${pid}.map`));
      }
    }
    if (total === 0) throw new Error(`${name}: callgrind counted nothing`);
    const per = (n) => fmt(n / COUNT);
    console.log(
      `  (${name}: V8 compiler ${per(parts.compiler)}, GC ${per(parts.gc)}, SQLite ${per(parts.sqlite)}; ` +
        `without the compiler ${per(total - parts.compiler)} per webhook)`,
    );
    return {
      total: total / COUNT,
      withoutCompiler: (total - parts.compiler) / COUNT,
      sqlite: parts.sqlite / COUNT,
    };
  } finally {
    // A failed run leaves no server behind under valgrind.
    if (server?.child.exitCode === null) server.child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
    const schema = measureSchema.get(dir);
    if (schema !== undefined) await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  }
}

/**
 * `count` webhooks: jobs in blocks of 1,000, each running 1, running 2, succeeded 3. Each is
 * signed as it is sent: under valgrind the warm-up alone can outlast the 5 minutes a timestamp is
 * accepted.
 */
function bodies(prefix, count) {
  return jobSteps(prefix, count, ({ jobId, state, seq, result }, n) => ({
    id: `${prefix}-msg-${n}`,
    body: JSON.stringify(result === undefined ? { jobId, state, seq } : { jobId, state, seq, result }),
  }));
}

/** Sends every webhook, IN_FLIGHT at a time; any answer but 200 stops the run. */
async function send(url, webhooks, agent) {
  const target = new URL("/webhooks/acme", url);
  let next = 0;
  const one = ({ id, body }) =>
    new Promise((resolve, reject) => {
      const timestampSeconds = Math.floor(Date.now() / 1000);
      const signature = signStandardWebhook({ id, timestampSeconds, body, secret: BENCH_SECRET });
      const headers = {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
        ...signature,
      };
      const req = request(target, { method: "POST", agent, headers }, (response) => {
        response.on("error", reject);
        let answer = "";
        response.setEncoding("utf8");
        response.on("data", (chunk) => {
          answer += chunk;
        });
        response.on("end", () =>
          response.statusCode === 200
            ? resolve()
            : reject(new Error(`answered ${response.statusCode}: ${answer.slice(0, 300)}`)),
        );
      });
      req.on("error", reject);
      req.end(body);
    });
  // A server under valgrind can be slow enough for its own keep-alive timer to close a socket
  // that already holds the next request, or (PostgreSQL) for a deadline to pass and a webhook to
  // be answered 503, stored nowhere: that request is sent again, as a provider would (a
  // redelivery is answered 200 as a duplicate), and the count of resends is printed.
  const lane = async () => {
    while (next < webhooks.length) {
      const webhook = webhooks[next++];
      for (let attempt = 1; ; attempt++) {
        try {
          await one(webhook);
          break;
        } catch (error) {
          if (attempt >= 5 || !/ECONNRESET|socket hang up|EPIPE|answered 503/.test(String(error)))
            throw error;
          resent++;
          resentWhy = String(error.message ?? error);
        }
      }
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
}
