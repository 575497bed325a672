#!/usr/bin/env node
/**
 * What tracing costs on intake: signed webhooks per second through `finality serve` (SQLite,
 * no effects: verify → ingest transaction → 200), wrk replaying pre-signed requests over
 * loopback, in interleaved rounds of:
 *   (a) off        telemetry off (no otlpUrl): the default;
 *   (b) ratio-0.01 traces on, 1 % of them sampled, exported to a local OTLP/HTTP receiver;
 *   (c) ratio-1    traces on, every one sampled and exported to the same receiver;
 *   (d) baseline   with BENCH_BASELINE_DIST (another build's dist/, e.g. main's before this
 *                  change): that build's intake, to show "off" did not change intake.
 * The receiver is a bare node:http server in its own process that reads each POST and answers
 * 200 (it decodes nothing: the exporter's cost is on the service's side). Prints only.
 *
 * Knobs: BENCH_ROUNDS (3), BENCH_SECONDS (8), BENCH_WARMUP_SECONDS (2), BENCH_CONNECTIONS (50),
 * BENCH_REQUESTS (300000 per round), BENCH_SYNC ("NORMAL"), BENCH_BASELINE_DIST.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CLI, intKnob, startFinalityServe } from "./lib/finality-serve.js";
import { writePresigned } from "./lib/presign.js";
import { cpuMs, peakRssMiB, startServer } from "./lib/processes.js";
import { hasWrk, runWrk } from "./lib/wrk.js";

const env = process.env;
const int = intKnob;
const ROUNDS = int(env.BENCH_ROUNDS, 3);
const SECONDS = int(env.BENCH_SECONDS, 8);
const WARMUP_SECONDS = int(env.BENCH_WARMUP_SECONDS, 2);
const CONNECTIONS = int(env.BENCH_CONNECTIONS, 50);
const REQUESTS = int(env.BENCH_REQUESTS, 300_000);
const SYNC = (env.BENCH_SYNC ?? "NORMAL").toUpperCase();
const BASELINE_DIST = env.BENCH_BASELINE_DIST;
const PATH = "/webhooks/acme";
const here = (path) => fileURLToPath(new URL(path, import.meta.url));

const startFinality = (dir, telemetry, cli = CLI) =>
  startFinalityServe(dir, { extra: telemetry ? { telemetry } : {}, sync: SYNC, logLevel: "warn", cli });

const designs = (otlpUrl) => ({
  ...(BASELINE_DIST
    ? { baseline: (dir) => startFinality(dir, null, join(BASELINE_DIST, "cli/main.js")) }
    : {}),
  off: (dir) => startFinality(dir, null),
  "ratio-0.01": (dir) => startFinality(dir, { otlpUrl, sampleRatio: 0.01 }),
  "ratio-1": (dir) => startFinality(dir, { otlpUrl, sampleRatio: 1 }),
});

async function measure(start, files) {
  const dir = mkdtempSync(join(tmpdir(), "finality-bench-telemetry-"));
  const server = await start(dir);
  try {
    const common = { url: server.url, path: PATH, connections: CONNECTIONS };
    if (WARMUP_SECONDS > 0) await runWrk({ ...common, file: files.warmup, seconds: WARMUP_SECONDS });
    const cpuBefore = cpuMs(server.pid);
    const result = await runWrk({ ...common, file: files.measure, seconds: SECONDS });
    const cpuUsPerRequest = ((cpuMs(server.pid) - cpuBefore) * 1000) / result.requests;
    return { ...result, cpuUsPerRequest, rssMiB: peakRssMiB(server.pid) };
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const fmt = (n) => Math.round(n).toLocaleString("en-US");

async function main() {
  if (!hasWrk()) {
    console.error("wrk is not installed (Debian: apt-get install -y wrk)");
    process.exit(1);
  }
  console.log(
    `rounds=${ROUNDS} seconds=${SECONDS} warmup=${WARMUP_SECONDS}s connections=${CONNECTIONS} sync=${SYNC}${BASELINE_DIST ? ` baseline=${BASELINE_DIST}` : ""}`,
  );
  const filesDir = mkdtempSync(join(tmpdir(), "finality-bench-requests-"));
  const collector = await startServer(process.execPath, [here("servers/bare-server.js")]);
  const all = designs(`${collector.url}/v1/traces`);
  const results = Object.fromEntries(Object.keys(all).map((name) => [name, []]));
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      const files = { warmup: join(filesDir, "warmup.tsv"), measure: join(filesDir, "measure.tsv") };
      await writePresigned(files.warmup, { count: 50_000, prefix: `w${round}` });
      await writePresigned(files.measure, { count: REQUESTS, prefix: `m${round}` });
      // The order turns each round, so no design always runs first (or last) on a warm machine.
      const names = Object.keys(all);
      const order = names.map((_, i) => names[(i + round - 1) % names.length]);
      for (const name of order) {
        const r = await measure(all[name], files);
        results[name].push(r);
        const problems = [
          r.non2xx && `${r.non2xx} non-2xx`,
          r.wraps && `${r.wraps} wraps (raise BENCH_REQUESTS)`,
        ];
        console.log(
          `  round ${round} ${name.padEnd(10)} ${fmt(r.rate).padStart(7)} req/s  cpu ${Math.round(r.cpuUsPerRequest)} us/req  p99 ${(r.p99Us / 1000).toFixed(1)} ms  RSS ${r.rssMiB} MiB${problems.some(Boolean) ? `  !! ${problems.filter(Boolean).join(", ")}` : ""}`,
        );
      }
    }
  } finally {
    await collector.stop();
    rmSync(filesDir, { recursive: true, force: true });
  }
  const rate = (name) => median(results[name].map((r) => r.rate));
  const cpu = (name) => median(results[name].map((r) => r.cpuUsPerRequest));
  const p99 = (name) => median(results[name].map((r) => r.p99Us)) / 1000;
  console.log("\nMedian of rounds; ratios against telemetry off, same run");
  for (const name of Object.keys(results)) {
    console.log(
      `  ${name.padEnd(10)} ${fmt(rate(name)).padStart(7)} req/s (${(rate(name) / rate("off")).toFixed(2)}x)  cpu ${Math.round(cpu(name))} us/req (${(cpu(name) / cpu("off")).toFixed(2)}x)  p99 ${p99(name).toFixed(1)} ms`,
    );
  }
}

await main();
