/**
 * Pruning during load: the p99 latency of ingests (50 in flight, in-process, SQLite file) while a
 * retention pass deletes a backlog of expired rows, beside the same load without a pass, measured
 * in the same run. Target: p99 with pruning ≤ 2× p99 without.
 *
 * Then what the pruned jobs leave behind: the tombstones table (with its index), in bytes per
 * million pruned jobs, beside what the same jobs took in the jobs table before the pass. Job ids
 * are 32 characters, like most providers' (an OpenAI batch id is 34).
 *
 * Knobs: BENCH_PRUNE_JOBS (old settled jobs to prune, default 100000), BENCH_PRUNE_SECONDS (3).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { DEFAULT_RETENTION, pruneOnce } from "../dist/engine/retention.js";
import { createFinality } from "../dist/exports/sqlite.js";
import { manualClock } from "../dist/index.js";
import { fmt, percentile } from "./lib/stats.js";

const OLD_JOBS = Number(process.env.BENCH_PRUNE_JOBS ?? 100_000);
const SECONDS = Number(process.env.BENCH_PRUNE_SECONDS ?? 3);
const DAY = 86_400_000;
const dir = mkdtempSync(join(tmpdir(), "finality-bench-prune-"));
const clock = manualClock(Date.UTC(2026, 0, 1));
const file = join(dir, "prune.db");
const finality = createFinality({ store: { sqlite: file }, clock });
const oldId = (i) => `op_${String(i).padStart(29, "0")}`;

/** Bytes the pages of these tables and indexes take (SQLite's dbstat), read on a second connection. */
function bytesOf(names) {
  const db = new Database(file, { readonly: true });
  try {
    const marks = names.map(() => "?").join(", ");
    return db
      .prepare(`SELECT coalesce(sum(pgsize), 0) AS n FROM dbstat WHERE name IN (${marks})`)
      .get(...names).n;
  } finally {
    db.close();
  }
}
const JOB_TABLE = ["jobs", "sqlite_autoindex_jobs_1", "jobs_by_state", "jobs_by_provider", "jobs_settled"];
const TOMBSTONE_TABLE = ["tombstones", "tombstones_by_settled"];

async function seedOldJobs(count) {
  for (let base = 0; base < count; base += 1000) {
    const batch = [];
    for (let i = base; i < Math.min(count, base + 1000); i++) {
      batch.push(
        finality.ingest({
          provider: "acme",
          id: oldId(i),
          state: "running",
          source: "webhook",
          deliveryId: `old-${i}-1`,
        }),
      );
      batch.push(
        finality.ingest({
          provider: "acme",
          id: oldId(i),
          state: "succeeded",
          source: "webhook",
          deliveryId: `old-${i}-2`,
        }),
      );
    }
    await Promise.all(batch);
  }
}

let serial = 0;
/** Latencies (ms) of ingests kept 50 in flight for `seconds`, while `during` runs. */
async function load(seconds, during) {
  const latencies = [];
  const until = Date.now() + seconds * 1000;
  let background = during ? during() : Promise.resolve();
  let backgroundDone = false;
  background = background.then(() => {
    backgroundDone = true;
  });
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      while (Date.now() < until || (during && !backgroundDone)) {
        const n = serial++;
        const started = performance.now();
        await finality.ingest({
          provider: "acme",
          id: `live-${n % 5000}`,
          state: "running",
          source: "webhook",
          deliveryId: `live-${n}`,
          seq: n,
        });
        latencies.push(performance.now() - started);
      }
    }),
  );
  await background;
  return latencies;
}

const t0 = Date.now();
await seedOldJobs(OLD_JOBS);
console.log(
  `seeded ${OLD_JOBS} settled jobs (${OLD_JOBS * 2} events and delivery ids) in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
);
clock.advance(30 * DAY);
const jobBytes = bytesOf(JOB_TABLE);
await load(1); // warm-up
const without = await load(SECONDS);
let pruned = null;
let pruneMs = 0;
const withPrune = await load(SECONDS, async () => {
  const started = performance.now();
  pruned = await pruneOnce(finality.store, DEFAULT_RETENTION, clock.now());
  pruneMs = performance.now() - started;
});
const p99Without = percentile(without, 99);
const p99With = percentile(withPrune, 99);
console.log(`pass removed ${JSON.stringify(pruned)} in ${fmt(pruneMs / 1000, 1)} s`);
console.log(`ingest p99 without a pass: ${fmt(p99Without, 2)} ms (${without.length} ingests)`);
console.log(`ingest p99 during a pass:  ${fmt(p99With, 2)} ms (${withPrune.length} ingests)`);
console.log(`ratio (during / without):  ${fmt(p99With / p99Without, 2)}  (target ≤ 2)`);
const tombstoneBytes = bytesOf(TOMBSTONE_TABLE);
const perMillion = (bytes) => `${fmt(((bytes / OLD_JOBS) * 1e6) / 2 ** 20, 1)} MiB`;
console.log(
  `tombstones: ${pruned?.settledJobs ?? 0} rows, ${fmt(tombstoneBytes / 2 ** 20, 1)} MiB with their index → ${perMillion(tombstoneBytes)} per million pruned jobs (${fmt(tombstoneBytes / OLD_JOBS, 0)} B each)`,
);
console.log(`the same jobs in the jobs table before the pass: ${perMillion(jobBytes)} per million`);
await finality.close();
rmSync(dir, { recursive: true, force: true });
