#!/usr/bin/env node
/**
 * Where one webhook's microseconds go: runs `finality serve` (SQLite, synchronous NORMAL, no
 * effects) under `node --cpu-prof`, loads it with wrk replaying pre-signed webhooks, then sorts
 * the profile's samples into stages (parse, verify, validation, reducer, SQL, JSON, logging,
 * metrics, HTTP and response, GC) by the function and file each sample's stack is in, and prints
 * µs per webhook per stage. Not a `.bench.js`: `npm run bench` does not run it.
 *
 *   npm run build && node bench/profile-intake.js
 *
 * Knobs: BENCH_SECONDS (5), BENCH_CONNECTIONS (50), BENCH_LOG_LEVEL (info), BENCH_PROFILE_KEEP
 * (a directory to keep the .cpuprofile in, for Chrome DevTools), BENCH_PROFILE_DIST (another
 * build's dist/ to profile, e.g. the commit before a change), BENCH_PROFILE_OTHER (list what
 * fell in no stage), BENCH_PROFILE_PG (a PostgreSQL URL: the store on it, in a schema of its own,
 * dropped after; e.g. postgres://postgres@127.0.0.1:5432/test), BENCH_PROFILE_EFFECT (1: an
 * effect on `succeeded`, delivered over HTTP to a bare receiver in a process of its own, as
 * webhooks.bench.js's "finality" design; its dispatcher and delivery get a stage of their own).
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { BENCH_SECRET, writePresigned } from "./lib/presign.js";
import { startServer } from "./lib/processes.js";
import { hasWrk, runWrk } from "./lib/wrk.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const CLI = process.env.BENCH_PROFILE_DIST
  ? join(process.env.BENCH_PROFILE_DIST, "cli/main.js")
  : fileURLToPath(new URL("../dist/cli/main.js", import.meta.url));

if (!hasWrk()) {
  console.log("SKIPPED: wrk is not installed (Debian: apt-get install -y wrk)");
  process.exit(0);
}

const dir = mkdtempSync(join(tmpdir(), "finality-profile-"));
const config = join(dir, "finality.config.json");
const PG = process.env.BENCH_PROFILE_PG;
const schema = `finality_prof_${process.pid}`;
// Where the effect is delivered (BENCH_PROFILE_EFFECT): a bare server in a process of its own.
const receiver = process.env.BENCH_PROFILE_EFFECT
  ? await startServer(process.execPath, [fileURLToPath(new URL("servers/bare-server.js", import.meta.url))])
  : null;
writeFileSync(
  config,
  JSON.stringify({
    ...(PG ? { store: { postgres: PG, schema } } : {}),
    providers: { acme: { type: "generic", webhook: { secrets: [BENCH_SECRET] } } },
    ...(receiver
      ? { effects: [{ name: "notify", url: receiver.url, secret: BENCH_SECRET, on: ["succeeded"] }] }
      : {}),
  }),
);
const requests = join(dir, "requests.tsv");
await writePresigned(requests, { count: 300_000, prefix: "prof" });
const server = await startServer(
  process.execPath,
  [
    "--cpu-prof",
    "--cpu-prof-dir",
    dir,
    CLI,
    "serve",
    "--config",
    config,
    "--port",
    "0",
    ...(PG ? [] : ["--db", join(dir, "f.db")]),
  ],
  { FINALITY_SQLITE_SYNCHRONOUS: "NORMAL", FINALITY_LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "info" },
);
const load = { url: server.url, path: "/webhooks/acme", connections: CONNECTIONS };
const warmup = join(dir, "warmup.tsv");
await writePresigned(warmup, { count: 100_000, prefix: "warm" });
await runWrk({ ...load, file: warmup, seconds: 2 });
const result = await runWrk({ ...load, file: requests, seconds: SECONDS });
await server.stop();
await receiver?.stop();
if (PG) {
  const { openAdmin } = await import("./lib/pg-admin.js");
  const admin = await openAdmin(PG);
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await admin.end();
}
const file = readdirSync(dir).find((name) => name.endsWith(".cpuprofile"));
if (!file) throw new Error("the server wrote no .cpuprofile (did it exit by process.exit?)");
if (process.env.BENCH_PROFILE_KEEP) cpSync(join(dir, file), join(process.env.BENCH_PROFILE_KEEP, file));
const profile = JSON.parse(readFileSync(join(dir, file), "utf8"));
rmSync(dir, { recursive: true, force: true });

/**
 * A stage per stack: the innermost frame that names one wins (a JSON.parse called from the
 * reducer is JSON). Order matters: first match from the top of the stack.
 */
const STAGES = [
  ["GC", (f) => f.functionName === "(garbage collector)"],
  ["JSON encode/decode", (f) => /^(stringify|parse)$/.test(f.functionName) && f.url === ""],
  ["SQL (better-sqlite3, node-postgres)", (f) => /better-sqlite3|node_modules\/pg|\/store\//.test(f.url)],
  [
    "signature verify",
    (f) =>
      /\/webhooks\/(standard-webhooks|signature-common|hmac|verifiers|web-)/.test(f.url) ||
      /^(createHmac|timingSafeEqual|digest|update)$/.test(f.functionName),
  ],
  [
    "validation (zod, parse observation)",
    (f) => /node_modules\/zod|core\/validation|generic-webhook|receiver-types/.test(f.url),
  ],
  [
    "effects (dispatcher, signing, delivery)",
    (f) => /\/engine\/(dispatcher|http-effect|node-http-transport|effect-|delivery-)/.test(f.url),
  ],
  ["reducer + ingest", (f) => /\/core\/|\/engine\//.test(f.url)],
  ["logging", (f) => /request-log|\/log|pino/.test(f.url)],
  ["metrics", (f) => /metrics/.test(f.url)],
  ["framework (hono) + intake", (f) => /hono|\/http\//.test(f.url)],
  [
    "node HTTP, sockets, response",
    (f) =>
      /^node:(_http|http|net|stream|internal\/streams|events|buffer)|^node:internal\/(http|stream|net)/.test(
        f.url,
      ),
  ],
];

const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
const stageOf = new Map();
function stage(id) {
  const known = stageOf.get(id);
  if (known) return known;
  let found = "other (idle excluded)";
  for (let at = id; at !== undefined; at = parent.get(at)) {
    const frame = byId.get(at).callFrame;
    const hit = STAGES.find(([, test]) => test(frame));
    if (hit) {
      found = hit[0];
      break;
    }
  }
  stageOf.set(id, found);
  return found;
}

const totals = new Map();
const others = new Map();
const deltas = profile.timeDeltas;
// Only the measured run: start-up, migrations and the warm-up come before it.
const from = profile.endTime - SECONDS * 1e6;
let busyUs = 0;
let at = profile.startTime;
for (let i = 0; i < profile.samples.length; i++) {
  at += deltas[i];
  if (at < from) continue;
  const node = byId.get(profile.samples[i]);
  if (node.callFrame.functionName === "(idle)" || node.callFrame.functionName === "(program)") continue;
  const us = deltas[i + 1] ?? 0;
  busyUs += us;
  const name = stage(node.id);
  totals.set(name, (totals.get(name) ?? 0) + us);
  if (name.startsWith("other")) {
    const where = `${node.callFrame.functionName || "(anonymous)"} ${node.callFrame.url.replace(/^.*\/(src|dist|node_modules)\//, "$1/")}`;
    others.set(where, (others.get(where) ?? 0) + us);
  }
}
// The profile also holds start-up and warm-up: scale to the requests wrk counted over the run.
const perRequest = (us) => us / result.requests;
console.log(
  `${SECONDS} s, ${CONNECTIONS} connections: ${Math.round(result.rate)} req/s, ${result.requests} requests`,
);
console.log(
  `JS thread busy ${(perRequest(busyUs)).toFixed(1)} µs per webhook (main thread only; SQLite I/O included)`,
);
console.log("stage | µs/webhook | share");
for (const [name, us] of [...totals].sort((a, b) => b[1] - a[1]))
  console.log(`${name} | ${perRequest(us).toFixed(1)} | ${((100 * us) / busyUs).toFixed(0)}%`);
if (process.env.BENCH_PROFILE_OTHER) {
  console.log("\nlargest self times in 'other':");
  for (const [where, us] of [...others].sort((a, b) => b[1] - a[1]).slice(0, 25))
    console.log(`${perRequest(us).toFixed(2).padStart(7)} µs  ${where}`);
}
