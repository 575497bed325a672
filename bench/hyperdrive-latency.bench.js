/**
 * What a Worker → PostgreSQL ledger (Hyperdrive) would pay per webhook: `finality serve` on
 * PostgreSQL, reached directly and through a loopback TCP proxy that delays every chunk by a fixed
 * time each way (5, 20, 50 ms: a database in the same city, the same region, another continent).
 * Counts the round trips of one webhook ingest at the proxy (each time the client speaks again
 * after the server answered), and prints each delay's webhook latency (sequential, one in flight)
 * and rate (16 in flight) beside the direct run of the same process, as ratios.
 *
 * Hyperdrive keeps the connection to the database warm and pooled, so only the queries' own
 * round trips are paid per request: that is what the warmed-up pool here measures too.
 *
 * Knobs: BENCH_HD_DELAYS (5,20,50), BENCH_HD_REQUESTS (60 sequential per delay),
 * BENCH_HD_URL (postgres://postgres@127.0.0.1:5432/test), BENCH_HD_SCHEMA (finality_bench_hd).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { signStandardWebhook } from "../dist/webhooks/schemes/standard-webhooks/node.js";
import { openAdmin } from "./lib/pg-admin.js";
import { BENCH_SECRET } from "./lib/presign.js";
import { startServer } from "./lib/processes.js";
import { fmt, median, percentile } from "./lib/stats.js";

const DELAYS = (process.env.BENCH_HD_DELAYS ?? "5,20,50").split(",").map(Number);
const REQUESTS = Number(process.env.BENCH_HD_REQUESTS ?? 60);
const IN_FLIGHT = 16;
const URL_ = process.env.BENCH_HD_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const SCHEMA = `${process.env.BENCH_HD_SCHEMA ?? "finality_bench_hd"}_${process.pid}`;
const CLI = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "finality-bench-hd-"));
const target = new URL(URL_);

let admin;
try {
  admin = await openAdmin(URL_);
} catch {
  console.log(`SKIPPED: no PostgreSQL at ${URL_}`);
  process.exit(0);
}

/**
 * A loopback TCP proxy to the database that holds every chunk `delayMs` before passing it on, in
 * each direction, in order. `roundTrips` counts the client's turns: each time it sends after the
 * server last spoke on that connection (or first), the request pays one more network round trip.
 */
async function delayProxy(delayMs) {
  const stats = { roundTrips: 0 };
  const sockets = new Set();
  const server = createServer({ noDelay: true }, (client) => {
    const upstream = createConnection({
      host: target.hostname,
      port: Number(target.port || 5432),
      noDelay: true,
    });
    sockets.add(client).add(upstream);
    let serverSpoke = true;
    const pipe = (from, to, fromClient) =>
      from.on("data", (chunk) => {
        if (fromClient && serverSpoke) stats.roundTrips++;
        serverSpoke = !fromClient;
        setTimeout(() => to.destroyed || to.write(chunk), delayMs);
      });
    pipe(client, upstream, true);
    pipe(upstream, client, false);
    const close = () => {
      setTimeout(() => {
        client.destroy();
        upstream.destroy();
      }, delayMs);
    };
    client.on("close", close).on("error", close);
    upstream.on("close", close).on("error", close);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = new URL(URL_);
  url.hostname = "127.0.0.1";
  url.port = String(server.address().port);
  return {
    url: url.toString(),
    stats,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

let serial = 0;
function serve(databaseUrl) {
  const config = join(dir, `config-${++serial}.json`);
  writeFileSync(
    config,
    JSON.stringify({
      store: { postgres: databaseUrl, schema: SCHEMA },
      providers: { acme: { type: "generic", webhook: { secrets: [BENCH_SECRET] } } },
    }),
  );
  return startServer(process.execPath, [CLI, "serve", "--config", config, "--port", "0"], {
    FINALITY_LOG_LEVEL: "warn",
  });
}

let delivery = 0;
/** One signed webhook: a new job's first observation, or the next step of an existing one. */
async function send(url, jobId, state, seq) {
  const body = JSON.stringify({ jobId, state, seq });
  const headers = signStandardWebhook({
    id: `hd-${process.pid}-${++delivery}`,
    timestampSeconds: Math.floor(Date.now() / 1000),
    body,
    secret: BENCH_SECRET,
  });
  const started = performance.now();
  const response = await fetch(new URL("/webhooks/acme", url), {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`webhook answered ${response.status}`);
  return performance.now() - started;
}

/** Latencies of sequential webhooks (a new job running, then it succeeds), and the rate at IN_FLIGHT. */
async function measure(url, label, stats) {
  // Warm-up: the pool's connections are opened (Hyperdrive keeps them open between requests).
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, (_, i) => send(url, `${label}-warm-${i}`, "running", 1)),
  );
  const latencies = [];
  const trips = { created: [], settled: [] };
  for (let i = 0; i < REQUESTS; i++) {
    const jobId = `${label}-seq-${i}`;
    for (const [state, seq, kind] of [
      ["running", 1, "created"],
      ["succeeded", 2, "settled"],
    ]) {
      const before = stats?.roundTrips ?? 0;
      latencies.push(await send(url, jobId, state, seq));
      if (stats) trips[kind].push(stats.roundTrips - before);
    }
  }
  let next = 0;
  const total = REQUESTS * 2;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < total) {
        const i = next++;
        await send(url, `${label}-par-${i >> 1}`, i % 2 === 0 ? "running" : "succeeded", (i % 2) + 1);
      }
    }),
  );
  const rate = total / ((performance.now() - started) / 1000);
  return { p50: median(latencies), p99: percentile(latencies, 99), rate, trips };
}

const rows = [];
try {
  // Direct: also creates the schema (migrations), so the delayed runs start on a migrated one.
  const direct = await serve(URL_);
  const base = await measure(direct.url, "direct", null);
  await direct.stop();
  for (const delayMs of DELAYS) {
    const proxy = await delayProxy(delayMs);
    const service = await serve(proxy.url);
    const result = await measure(service.url, `d${delayMs}`, proxy.stats);
    await service.stop();
    await proxy.close();
    rows.push({ delayMs, ...result });
  }
  const x = (a, b) => `${(a / b).toFixed(a / b < 1 ? 2 : 1)}x`;
  const tripsOf = (list) => `${Math.min(...list)}–${Math.max(...list)} (median ${median(list)})`;
  console.log(
    `finality serve on PostgreSQL, ${REQUESTS * 2} sequential webhooks per run (a new job, then its terminal update), then ${REQUESTS * 2} at ${IN_FLIGHT} in flight`,
  );
  console.log(
    `direct (same run): p50 ${fmt(base.p50)} ms, p99 ${fmt(base.p99)} ms, ${fmt(base.rate, 0)} webhooks/s at ${IN_FLIGHT} in flight`,
  );
  console.log(
    "delay each way | round trips: new job | terminal update | p50 ms (× direct) | p99 ms (× direct) | webhooks/s at 16 (× direct)",
  );
  for (const r of rows)
    console.log(
      `${r.delayMs} ms | ${tripsOf(r.trips.created)} | ${tripsOf(r.trips.settled)} | ${fmt(r.p50)} (${x(r.p50, base.p50)}) | ${fmt(r.p99)} (${x(r.p99, base.p99)}) | ${fmt(r.rate, 0)} (${x(r.rate, base.rate)})`,
    );
} finally {
  await admin.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
  await admin.end();
  rmSync(dir, { recursive: true, force: true });
}
