/**
 * Settle-to-consumer latency of the settlement stream: webhooks settle jobs at a steady rate
 * (BENCH_SETTLE_RATE, default 200/s) against `finality serve` in its own process, while three
 * consumers in this process read the feed at once: the SSE stream, a long poll (`wait=30`), and,
 * as the baseline, a plain poll without `wait` every BENCH_POLL_MS (100 ms). Each latency runs
 * from the moment the webhook is sent to the moment a consumer holds the settlement; the
 * webhook's own round trip (its commit included) is printed beside them, from the same run, as
 * the floor no consumer can beat.
 *
 * Two setups: SQLite (one server), and PostgreSQL with two replicas, webhooks to one and the
 * consumers on the other (skipped without a database at BENCH_PG_URL).
 *
 * Knobs: BENCH_SETTLE_RATE (200), BENCH_SETTLE_SECONDS (10), BENCH_POLL_MS (100),
 * BENCH_PG_URL (postgres://postgres@127.0.0.1:5432/test).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { signStandardWebhook } from "../dist/webhooks/schemes/standard-webhooks/node.js";
import { openAdmin } from "./lib/pg-admin.js";
import { BENCH_SECRET } from "./lib/presign.js";
import { startServer } from "./lib/processes.js";
import { fmt, percentile } from "./lib/stats.js";

const RATE = Number(process.env.BENCH_SETTLE_RATE ?? 200);
const SECONDS = Number(process.env.BENCH_SETTLE_SECONDS ?? 10);
const POLL_MS = Number(process.env.BENCH_POLL_MS ?? 100);
const PG_URL = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const TOTAL = RATE * SECONDS;
const dir = mkdtempSync(join(tmpdir(), "finality-bench-settlements-"));
const cli = new URL("../dist/cli/main.js", import.meta.url).pathname;
const PROVIDERS = { acme: { type: "generic", webhook: { secrets: [BENCH_SECRET] } } };
console.log(`settlements: ${TOTAL} at ${RATE}/s for ${SECONDS} s; plain poll every ${POLL_MS} ms`);

function serve(name, config, args = []) {
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(config));
  return startServer(process.execPath, [cli, "serve", "--config", file, "--port", "0", ...args], {
    FINALITY_LOG_LEVEL: "warn",
  });
}

/** Records when a consumer first held each job id; `finished` resolves when it holds all. */
function recorder(name) {
  const seenAt = new Map();
  let done;
  const finished = new Promise((resolve) => (done = resolve));
  return {
    name,
    seenAt,
    finished,
    add(id) {
      if (!seenAt.has(id)) seenAt.set(id, performance.now());
      if (seenAt.size === TOTAL) done();
    },
  };
}

async function sse(url, record, signal) {
  try {
    const response = await fetch(`${url}/v1/settlements/stream`, { signal });
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end = buffer.indexOf("\n\n");
      while (end !== -1) {
        const data = /^data: (.*)$/m.exec(buffer.slice(0, end));
        if (data) record.add(JSON.parse(data[1]).id);
        buffer = buffer.slice(end + 2);
        end = buffer.indexOf("\n\n");
      }
    }
  } catch {
    // aborted at the end of the run
  }
}

async function poll(url, record, wait, signal) {
  let after;
  while (!signal.aborted) {
    const query = `limit=1000${wait ? "&wait=30" : ""}${after ? `&after=${after}` : ""}`;
    try {
      const page = await (await fetch(`${url}/v1/settlements?${query}`, { signal })).json();
      for (const item of page.items) record.add(item.id);
      after = page.cursor ?? undefined;
      if (!wait && page.items.length === 0) await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    } catch {
      return;
    }
  }
}

async function settle(url, id, sentAt, answeredAt) {
  const body = JSON.stringify({ jobId: id, state: "succeeded", result: { id } });
  const timestampSeconds = Math.floor(Date.now() / 1000);
  const headers = signStandardWebhook({ id: `msg-${id}`, timestampSeconds, body, secret: BENCH_SECRET });
  sentAt.set(id, performance.now());
  const response = await fetch(`${url}/webhooks/acme`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`webhook answered ${response.status}`);
  answeredAt.set(id, performance.now());
}

/** One run: webhooks to `settleUrl` at RATE, the three consumers on `consumeUrl`. */
async function measure(label, settleUrl, consumeUrl) {
  const sentAt = new Map();
  const answeredAt = new Map();
  const stop = new AbortController();
  const consumers = [
    recorder("SSE stream"),
    recorder("long poll (wait=30)"),
    recorder(`plain poll every ${POLL_MS} ms`),
  ];
  const running = [
    sse(consumeUrl, consumers[0], stop.signal),
    poll(consumeUrl, consumers[1], true, stop.signal),
    poll(consumeUrl, consumers[2], false, stop.signal),
  ];
  // The consumers connect before the first settlement.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const started = performance.now();
  const sending = [];
  for (let i = 0; i < TOTAL; i++) {
    const wait = started + (i * 1000) / RATE - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    sending.push(settle(settleUrl, `job-${i}`, sentAt, answeredAt));
  }
  await Promise.all(sending);
  await Promise.all(consumers.map((c) => c.finished));
  stop.abort();
  await Promise.allSettled(running);

  console.log(`\n${label}`);
  const ids = [...sentAt.keys()];
  const line = (name, values) =>
    console.log(
      `  ${name.padEnd(34)} median ${fmt(percentile(values, 50), 1).padStart(7)} ms   p99 ${fmt(percentile(values, 99), 1).padStart(7)} ms`,
    );
  line(
    "webhook 2xx (baseline: the commit)",
    ids.map((id) => answeredAt.get(id) - sentAt.get(id)),
  );
  for (const consumer of consumers)
    line(
      consumer.name,
      ids.map((id) => consumer.seenAt.get(id) - sentAt.get(id)),
    );
}

const sqlite = await serve("sqlite", { providers: PROVIDERS }, ["--db", join(dir, "f.db")]);
await measure("SQLite, one server", sqlite.url, sqlite.url);
await sqlite.stop();

let admin = null;
try {
  admin = await openAdmin(PG_URL);
} catch {
  console.log(`\nPostgreSQL: SKIPPED, no database at ${PG_URL}`);
}
if (admin !== null) {
  const schema = `finality_bench_settlements_${process.pid}`;
  const config = { providers: PROVIDERS, store: { postgres: PG_URL, schema } };
  try {
    const a = await serve("pg-a", config);
    const b = await serve("pg-b", config);
    await measure("PostgreSQL, two replicas: webhooks to A, consumers on B", a.url, b.url);
    await Promise.all([a.stop(), b.stop()]);
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  }
}
rmSync(dir, { recursive: true, force: true });
