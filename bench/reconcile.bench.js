/**
 * Reconcile cost follows due work, not stored work: the time of one reconcile tick that finds
 * 100 due jobs, in a store holding 10,000 settled jobs and in one holding 1,000,000, measured in
 * interleaved rounds of the same run; the ratio should stay ≤ 1.5. Then polls per second sustained
 * against the fake provider over loopback HTTP with concurrency 50.
 *
 * Knobs: BENCH_RECONCILE_BIG (default 1000000), BENCH_RECONCILE_ROUNDS (default 15),
 * BENCH_POLLS (default 5000).
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { createFinality } from "../dist/exports/sqlite.js";
import { createGenericPoller, createReconciler, manualClock } from "../dist/index.js";
import { FakeProvider } from "../dist/testing/fake-provider.js";
import { fmt, median } from "./lib/stats.js";

const BIG = Number(process.env.BENCH_RECONCILE_BIG ?? 1_000_000);
const SMALL = 10_000;
const ROUNDS = Number(process.env.BENCH_RECONCILE_ROUNDS ?? 15);
const POLLS = Number(process.env.BENCH_POLLS ?? 5000);
const DUE = 100;
const policy = { minMs: 30_000, maxMs: 900_000, stuckAfterMs: 6 * 3_600_000 };
const dir = mkdtempSync(join(tmpdir(), "finality-bench-reconcile-"));
console.log(`settled jobs: ${SMALL} vs ${BIG}; due per tick: ${DUE}; rounds: ${ROUNDS}`);

/** A store with `settled` settled jobs and 2,000 open ones, written in bulk. */
function seed(file, settled) {
  createFinality({ store: { sqlite: file } }).close();
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = OFF");
  const insert = db.prepare(
    `INSERT INTO jobs (provider, id, state, version, submitted_at, updated_at, settled_at, settled_by, registered, next_check_at)
     VALUES ('acme', ?, ?, 2, 0, 0, ?, ?, 1, ?)`,
  );
  db.transaction(() => {
    for (let i = 0; i < settled; i++) insert.run(`settled-${i}`, "succeeded", 1, "webhook", null);
    for (let i = 0; i < 2000; i++) insert.run(`open-${i}`, "running", null, null, Number.MAX_SAFE_INTEGER);
  })();
  db.close();
}

async function ledger(file) {
  const clock = manualClock(1_000_000_000_000);
  const finality = createFinality({ store: { sqlite: file }, clock });
  // In-process poller: the tick's own cost (claim, record, reschedule), not a network's.
  const poller = async (job) => ({
    kind: "observed",
    observation: { provider: "acme", id: job.id, state: "running", source: "reconcile" },
  });
  const reconciler = createReconciler(finality, {
    providers: { acme: { ...policy, poller, concurrency: DUE } },
    random: Math.random,
  });
  const admin = new Database(file);
  const makeDue = admin.prepare(
    "UPDATE jobs SET next_check_at = ? WHERE job_no IN (SELECT job_no FROM jobs WHERE state = 'running' ORDER BY random() LIMIT ?)",
  );
  return { finality, reconciler, clock, makeDue, admin };
}

async function tick(side) {
  side.clock.advance(1);
  side.makeDue.run(side.clock.now(), DUE);
  const started = process.hrtime.bigint();
  const polled = await side.reconciler.runOnce();
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (polled !== DUE) throw new Error(`expected ${DUE} polls, got ${polled}`);
  return ms;
}

const t0 = Date.now();
seed(join(dir, "small.db"), SMALL);
seed(join(dir, "big.db"), BIG);
console.log(`seeded in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
const small = await ledger(join(dir, "small.db"));
const big = await ledger(join(dir, "big.db"));
const times = { small: [], big: [] };
for (let round = 0; round < ROUNDS + 2; round++) {
  const s = await tick(small);
  const b = await tick(big);
  if (round >= 2) {
    times.small.push(s);
    times.big.push(b);
  }
}
const ms = median(times.small);
const mb = median(times.big);
console.log(`tick with ${SMALL} settled:   median ${fmt(ms, 2)} ms`);
console.log(`tick with ${BIG} settled: median ${fmt(mb, 2)} ms`);
console.log(`ratio (big / small): ${fmt(mb / ms, 2)}  (target ≤ 1.5)`);
for (const side of [small, big]) {
  side.admin.close();
  await side.finality.close();
}

// Polls per second against the fake provider over loopback HTTP.
const fake = new FakeProvider();
await fake.listen();
const clock = manualClock(1_000_000_000_000);
const finality = createFinality({ store: { sqlite: join(dir, "polls.db") }, clock, graceSeconds: 0 });
for (let i = 0; i < POLLS; i++) {
  fake.addJob(`p-${i}`, [{ afterMs: 0, state: "running" }]);
  await finality.register({ provider: "acme", id: `p-${i}` });
}
const reconciler = createReconciler(finality, {
  providers: {
    acme: {
      ...policy,
      concurrency: 50,
      poller: createGenericPoller("acme", { url: `${fake.url}/jobs/{id}` }),
    },
  },
});
const started = process.hrtime.bigint();
const polled = await reconciler.runOnce();
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
console.log(
  `polls sustained (concurrency 50, loopback HTTP): ${fmt(polled / seconds, 0)} polls/s over ${polled} polls`,
);
await finality.close();
await fake.close();
rmSync(dir, { recursive: true, force: true });
