/**
 * What a /metrics scrape costs the SQLite service: `store.stats()` (jobs by state and effects by
 * status from the trigger-kept `row_counts`, the rest from partial indexes) against the baseline
 * of counting the tables with GROUP BY, as stats() did before, on the same file with 1,000,000
 * jobs, in interleaved rounds. better-sqlite3 is synchronous, so either figure is time the event
 * loop (and every webhook waiting on it) is held.
 *
 * Knobs: BENCH_METRICS_JOBS (default 1000000), BENCH_METRICS_ROUNDS (default 9).
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { createFinality } from "../dist/exports/sqlite.js";
import { fmt, median } from "./lib/stats.js";

const JOBS = Number(process.env.BENCH_METRICS_JOBS ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_METRICS_ROUNDS ?? 9);
const dir = mkdtempSync(join(tmpdir(), "finality-bench-metrics-"));
const file = join(dir, "ledger.db");
console.log(`jobs: ${JOBS} (1% open), effects: one per 10 settled jobs; rounds: ${ROUNDS}`);

const t0 = Date.now();
createFinality({ store: { sqlite: file } }).close();
const seeding = new Database(file);
seeding.pragma("synchronous = OFF");
const insertJob = seeding.prepare(
  `INSERT INTO jobs (provider, id, state, version, submitted_at, updated_at, settled_at, settled_by, registered, next_check_at)
   VALUES ('acme', ?, ?, 2, 0, 0, ?, ?, 1, ?)`,
);
const insertEffect = seeding.prepare(
  `INSERT INTO outbox (id, provider, job_id, name, idempotency_key, trigger, status, attempts, next_attempt_at, created_at, delivered_at)
   VALUES (?, 'acme', ?, 'notify', ?, 'succeeded', 'delivered', 1, 0, 0, 0)`,
);
seeding.transaction(() => {
  for (let i = 0; i < JOBS; i++) {
    const open = i % 100 === 0;
    insertJob.run(
      `job-${i}`,
      open ? "running" : "succeeded",
      open ? null : 1,
      open ? null : "webhook",
      open ? 1 : null,
    );
    if (!open && i % 10 === 1) insertEffect.run(`e-${i}`, `job-${i}`, `fin_${i}`);
  }
})();
seeding.close();
console.log(`seeded in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

const finality = createFinality({ store: { sqlite: file } });
const baseline = new Database(file, { readonly: true });
const groupBy = [
  baseline.prepare("SELECT state, count(*) AS n FROM jobs GROUP BY state"),
  baseline.prepare("SELECT status, count(*) AS n FROM outbox GROUP BY status"),
];

const timed = async (work) => {
  const started = performance.now();
  await work();
  return performance.now() - started;
};
const sides = { stats: [], groupBy: [] };
let checked = false;
for (let round = 0; round < ROUNDS; round++) {
  const stats = await finality.store.stats();
  if (!checked) {
    // The two ways must agree before their costs are compared.
    const counted = Object.fromEntries(groupBy[0].all().map((r) => [r.state, r.n]));
    if (JSON.stringify(stats.jobsByState) !== JSON.stringify(counted))
      throw new Error(
        `row_counts ${JSON.stringify(stats.jobsByState)} ≠ GROUP BY ${JSON.stringify(counted)}`,
      );
    checked = true;
  }
  sides.stats.push(await timed(() => finality.store.stats()));
  sides.groupBy.push(await timed(() => groupBy.map((statement) => statement.all())));
}
await finality.close();
baseline.close();
rmSync(dir, { recursive: true, force: true });

const stats = median(sides.stats);
const counted = median(sides.groupBy);
console.log(`stats() per scrape: ${fmt(stats, 2)} ms (median of ${ROUNDS})`);
console.log(`baseline, GROUP BY over jobs and outbox: ${fmt(counted)} ms`);
console.log(
  `ratio stats / baseline: ${(stats / counted).toFixed(3)} (${fmt(counted / stats)}× less event-loop time)`,
);
