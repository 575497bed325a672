#!/usr/bin/env node
/**
 * What fills V8's old space under load: the allocation sites of objects that lived long enough to
 * be promoted out of the young generation and then died (collected by a major GC). Peak RSS above
 * idle is the young generation plus this garbage between mark-compacts, so these sites, not what
 * stays alive, are what to make smaller or shorter-lived. A heap snapshot cannot show them (it
 * holds only what is alive); V8's sampling heap profiler can, with
 * `includeObjectsCollectedByMajorGC`, which node's `--heap-prof` does not set.
 *
 *   npm run build && node bench/heap-promotion.js > /dev/null
 *
 * (The server's own log lines, one per webhook, go to stdout as in `serve`; the figures go to stderr.)
 * `finality serve` runs in this process (the inspector session must be on its isolate), on SQLite
 * NORMAL with the generic provider; wrk sends pre-signed webhooks on 50 connections from another
 * process. Prints sampled bytes per webhook by function and by the last frames of the stack. The
 * figures move with timing (what outlives a scavenge depends on how long requests wait): compare
 * builds in interleaved runs, and read the sites more than the total.
 *
 * Knobs: BENCH_EFFECT (1: an HTTP effect on `succeeded`, delivered to a bare receiver in another
 * process), BENCH_SECONDS (8 measured, after 3 of warm-up), BENCH_DIST (another build's dist/),
 * BENCH_TOP (25 rows), BENCH_SAMPLING_BYTES (512: the profiler's mean interval).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { intKnob } from "./lib/finality-serve.js";
import { BENCH_SECRET, writePresigned } from "./lib/presign.js";
import { startServer } from "./lib/processes.js";
import { hasWrk } from "./lib/wrk.js";

const env = process.env;
const SECONDS = intKnob(env.BENCH_SECONDS, 8);
const TOP = intKnob(env.BENCH_TOP, 25);
const SAMPLING_BYTES = intKnob(env.BENCH_SAMPLING_BYTES, 512);
const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const dist = env.BENCH_DIST ?? here("../dist");
const { serve } = await import(join(dist, "host/node/serve.js"));

if (!hasWrk()) {
  console.error("wrk is not installed (Debian: apt-get install -y wrk)");
  process.exit(1);
}
const dir = mkdtempSync(join(tmpdir(), "finality-heap-promotion-"));
const receiver =
  env.BENCH_EFFECT === "1" ? await startServer(process.execPath, [here("servers/bare-server.js")]) : null;
const configFile = join(dir, "finality.config.json");
writeFileSync(
  configFile,
  JSON.stringify({
    providers: { acme: { type: "generic", webhook: { secrets: [BENCH_SECRET] } } },
    effects: receiver ? [{ name: "notify", url: receiver.url, secret: BENCH_SECRET, on: ["succeeded"] }] : [],
  }),
);
const service = await serve({
  configFile,
  flags: { port: 0, db: join(dir, "f.db") },
  env: { FINALITY_SQLITE_SYNCHRONOUS: "NORMAL", FINALITY_LOG_LEVEL: "info" },
});
const requests = join(dir, "requests.tsv");
await writePresigned(requests, { count: 200_000, prefix: "hp" });

/** wrk from another process (this one serves); resolves with the requests it sent. */
function load(seconds) {
  const args = ["-t1", "-c50", `-d${seconds}s`, "-s", here("wrk/presigned.lua"), service.url, "--", requests];
  return new Promise((resolve, reject) => {
    const wrk = spawn("wrk", [...args, "/webhooks/acme", "1"], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    wrk.stdout.on("data", (chunk) => {
      out += chunk;
    });
    wrk.on("error", reject);
    wrk.on("exit", () => {
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line === undefined) reject(new Error(`wrk printed no result: ${out}`));
      else resolve(JSON.parse(line));
    });
  });
}

try {
  await load(3);
  const session = new Session();
  session.connect();
  await session.post("HeapProfiler.startSampling", {
    samplingInterval: SAMPLING_BYTES,
    includeObjectsCollectedByMajorGC: true,
  });
  const result = await load(SECONDS);
  const { profile } = await session.post("HeapProfiler.stopSampling");
  session.disconnect();
  if (result.non2xx > 0) console.error(`!! ${result.non2xx} answers were not 2xx`);

  const byFunction = new Map();
  const byStack = new Map();
  const add = (map, key, bytes) => map.set(key, (map.get(key) ?? 0) + bytes);
  const frame = ({ functionName, url, lineNumber }) =>
    `${functionName || "(anonymous)"} ${url.replace(/^.*\/(dist|node_modules)\//, "$1/")}:${lineNumber + 1}`;
  // The profile is a tree of allocation stacks; a node's selfSize is what was sampled there.
  const walk = (node, stack) => {
    const here = [frame(node.callFrame), ...stack];
    if (node.selfSize > 0) {
      add(byFunction, here[0], node.selfSize);
      add(byStack, here.slice(0, 4).join("  <  "), node.selfSize);
    }
    for (const child of node.children) walk(child, here);
  };
  walk(profile.head, []);
  const perWebhook = (bytes) => String(Math.round(bytes / result.requests)).padStart(7);
  const total = [...byFunction.values()].reduce((sum, bytes) => sum + bytes, 0);
  console.error(
    `${result.requests} webhooks in ${SECONDS} s${receiver ? ", one effect in three" : ""}: ${perWebhook(total).trim()} sampled bytes per webhook promoted, then collected`,
  );
  const print = (title, map) => {
    console.error(`\n${title} (bytes per webhook)`);
    for (const [key, bytes] of [...map].sort((a, b) => b[1] - a[1]).slice(0, TOP))
      console.error(`${perWebhook(bytes)}  ${key}`);
  };
  print("by function", byFunction);
  print("by stack (allocating frame first)", byStack);
} finally {
  await service.stop();
  await receiver?.stop();
  rmSync(dir, { recursive: true, force: true });
}
