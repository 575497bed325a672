/**
 * Settle-to-consumer latency of the settlement stream: webhooks settle jobs at a steady rate
 * (BENCH_SETTLE_RATE, default 200/s) against `finality serve` on SQLite in its own process,
 * while three consumers in this process read the feed at once: the SSE stream, a long poll
 * (`wait=30`), and, as the baseline, a plain poll without `wait` every BENCH_POLL_MS (100 ms).
 * Each latency is from the moment the webhook is sent to the moment a consumer holds the
 * settlement; the webhook's own round trip (its commit included) is printed beside them, from
 * the same run, as the floor no consumer can beat.
 *
 * Knobs: BENCH_SETTLE_RATE (200), BENCH_SETTLE_SECONDS (10), BENCH_POLL_MS (100).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { signStandardWebhook } from "../dist/webhooks/schemes/standard-webhooks/node.js";
import { BENCH_SECRET } from "./lib/presign.js";
import { startServer } from "./lib/processes.js";
import { fmt, percentile } from "./lib/stats.js";

const RATE = Number(process.env.BENCH_SETTLE_RATE ?? 200);
const SECONDS = Number(process.env.BENCH_SETTLE_SECONDS ?? 10);
const POLL_MS = Number(process.env.BENCH_POLL_MS ?? 100);
const TOTAL = RATE * SECONDS;
const dir = mkdtempSync(join(tmpdir(), "finality-bench-settlements-"));
const config = join(dir, "config.json");
writeFileSync(
  config,
  JSON.stringify({ providers: { acme: { type: "generic", webhook: { secrets: [BENCH_SECRET] } } } }),
);
const cli = new URL("../dist/cli/main.js", import.meta.url).pathname;
const server = await startServer(
  process.execPath,
  [cli, "serve", "--config", config, "--port", "0", "--db", join(dir, "f.db")],
  { FINALITY_LOG_LEVEL: "warn" },
);
console.log(
  `settlements: ${TOTAL} at ${RATE}/s for ${SECONDS} s; plain poll every ${POLL_MS} ms; ${server.url}`,
);

const sentAt = new Map();
const answeredAt = new Map();
const stop = new AbortController();

/** Records when `name` first held each job id; resolves when it holds all of them. */
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

async function sse(record) {
  const response = await fetch(`${server.url}/v1/settlements/stream`, { signal: stop.signal });
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  try {
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

async function poll(record, wait) {
  let after;
  while (!stop.signal.aborted) {
    const query = `limit=1000${wait ? "&wait=30" : ""}${after ? `&after=${after}` : ""}`;
    try {
      const response = await fetch(`${server.url}/v1/settlements?${query}`, { signal: stop.signal });
      const page = await response.json();
      for (const item of page.items) record.add(item.id);
      after = page.cursor ?? undefined;
      if (!wait && page.items.length === 0) await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    } catch {
      return;
    }
  }
}

async function settle(i) {
  const id = `job-${i}`;
  const body = JSON.stringify({ jobId: id, state: "succeeded", result: { i } });
  const headers = signStandardWebhook({
    id: `msg-${i}`,
    timestampSeconds: Math.floor(Date.now() / 1000),
    body,
    secret: BENCH_SECRET,
  });
  sentAt.set(id, performance.now());
  const response = await fetch(`${server.url}/webhooks/acme`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`webhook answered ${response.status}`);
  answeredAt.set(id, performance.now());
}

const consumers = {
  sse: recorder("SSE stream"),
  longPoll: recorder("long poll (wait=30)"),
  poll: recorder(`plain poll every ${POLL_MS} ms`),
};
const running = [sse(consumers.sse), poll(consumers.longPoll, true), poll(consumers.poll, false)];
// Let the consumers connect before the first settlement.
await new Promise((resolve) => setTimeout(resolve, 500));

const started = performance.now();
const sending = [];
for (let i = 0; i < TOTAL; i++) {
  const wait = started + (i * 1000) / RATE - performance.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  sending.push(settle(i));
}
await Promise.all(sending);
await Promise.all(Object.values(consumers).map((c) => c.finished));
stop.abort();
await Promise.allSettled(running);

const line = (label, values) =>
  console.log(
    `${label.padEnd(34)} median ${fmt(percentile(values, 50), 1).padStart(7)} ms   p99 ${fmt(percentile(values, 99), 1).padStart(7)} ms`,
  );
const ids = [...sentAt.keys()];
line(
  "webhook 2xx (baseline: the commit)",
  ids.map((id) => answeredAt.get(id) - sentAt.get(id)),
);
for (const consumer of Object.values(consumers))
  line(
    consumer.name,
    ids.map((id) => consumer.seenAt.get(id) - sentAt.get(id)),
  );
await server.stop();
rmSync(dir, { recursive: true, force: true });
