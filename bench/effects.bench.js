/**
 * Effects delivered per second to a local receiver (a node:http server in its own process) at
 * concurrency 50, beside the floor: the same receiver fed plain POSTs at concurrency 50 by the
 * same fetch client, with no outbox. Then the delay from settle to delivery (median, p99) while
 * jobs settle at a steady rate with the dispatcher running.
 *
 * Knobs: BENCH_EFFECTS (default 5000), BENCH_EFFECTS_RATE per second (default 200),
 * BENCH_EFFECTS_SECONDS (default 5).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createFinality } from "../dist/exports/sqlite.js";
import { createDispatcher } from "../dist/index.js";
import { startServer } from "./lib/processes.js";
import { fmt, percentile } from "./lib/stats.js";

const COUNT = Number(process.env.BENCH_EFFECTS ?? 5000);
const RATE = Number(process.env.BENCH_EFFECTS_RATE ?? 200);
const SECONDS = Number(process.env.BENCH_EFFECTS_SECONDS ?? 5);
const CONCURRENCY = 50;
const dir = mkdtempSync(join(tmpdir(), "finality-bench-effects-"));
const receiver = await startServer(process.execPath, [
  new URL("./servers/bare-server.js", import.meta.url).pathname,
]);
console.log(`effects: ${COUNT}; concurrency ${CONCURRENCY}; receiver ${receiver.url}`);

async function floor() {
  let next = 0;
  const started = process.hrtime.bigint();
  const body = JSON.stringify({
    type: "job.settled",
    job: { provider: "acme", id: "x", state: "succeeded" },
  });
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < COUNT) {
        const response = await fetch(receiver.url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
        });
        await response.arrayBuffer();
      }
    }),
  );
  return COUNT / (Number(process.hrtime.bigint() - started) / 1e9);
}

async function finalityRate(round) {
  const finality = createFinality({
    store: { sqlite: join(dir, `backlog-${round}.db`) },
    effects: [{ name: "notify", url: receiver.url, secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" }],
  });
  const settles = [];
  for (let i = 0; i < COUNT; i++) {
    settles.push(
      finality.ingest({ provider: "acme", id: `job-${i}`, state: "succeeded", source: "webhook" }),
    );
  }
  await Promise.all(settles);
  const dispatcher = createDispatcher(finality, { concurrency: CONCURRENCY });
  const started = process.hrtime.bigint();
  const delivered = await drain(dispatcher);
  const rate = delivered / (Number(process.hrtime.bigint() - started) / 1e9);
  await finality.close();
  return rate;
}

async function drain(dispatcher) {
  let delivered = 0;
  for (;;) {
    const claimed = await dispatcher.runOnce();
    delivered += claimed;
    if (claimed === 0) return delivered;
  }
}

const floors = [];
const rates = [];
for (let round = 0; round < 3; round++) {
  floors.push(await floor());
  rates.push(await finalityRate(round));
}
const best = (xs) => Math.max(...xs);
console.log(`floor (plain POSTs, no outbox): ${fmt(best(floors), 0)} req/s`);
console.log(`finality dispatcher:            ${fmt(best(rates), 0)} effects/s`);
console.log(`ratio (finality / floor):       ${fmt(best(rates) / best(floors), 2)}`);

// Settle-to-delivery delay under a steady flow.
const finality = createFinality({
  store: { sqlite: join(dir, "steady.db") },
  effects: [{ name: "notify", url: receiver.url }],
});
const dispatcher = createDispatcher(finality, { concurrency: CONCURRENCY, pollIntervalMs: 1000 });
finality.onEffectsEnqueued(() => dispatcher.poke());
dispatcher.start();
const total = RATE * SECONDS;
const started = Date.now();
const settling = [];
for (let i = 0; i < total; i++) {
  const due = started + (i * 1000) / RATE;
  const wait = due - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  settling.push(
    finality.ingest({ provider: "acme", id: `steady-${i}`, state: "succeeded", source: "webhook" }),
  );
}
await Promise.all(settling);
for (;;) {
  const pending = await finality.store.listEffects({ status: "pending", limit: 1 });
  const inFlight = await finality.store.listEffects({ status: "delivering", limit: 1 });
  if (pending.items.length === 0 && inFlight.items.length === 0) break;
  await new Promise((resolve) => setTimeout(resolve, 50));
}
await dispatcher.stop();
const delays = [];
let cursor;
do {
  const page = await finality.store.listEffects({ status: "delivered", limit: 500, cursor });
  for (const effect of page.items) delays.push(effect.deliveredAt - effect.createdAt);
  cursor = page.nextCursor ?? undefined;
} while (cursor);
console.log(
  `settle → delivered at ${RATE}/s for ${SECONDS} s: median ${fmt(percentile(delays, 50), 1)} ms, p99 ${fmt(percentile(delays, 99), 1)} ms (${delays.length} effects)`,
);
await finality.close();
await receiver.stop();
rmSync(dir, { recursive: true, force: true });
