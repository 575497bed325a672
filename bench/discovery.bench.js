/**
 * What a discovery sweep costs: a generic fake provider holding 100,000 jobs, 1,000 of them new
 * since the stored cursor. The sweep from the cursor (list calls and ms) against the baseline of a
 * full relist with no cursor, in interleaved rounds on the same SQLite file, both adopting the
 * same number of new jobs. The cost must follow what is new, not what exists.
 *
 * Knobs: BENCH_DISCOVERY_JOBS (default 100000), BENCH_DISCOVERY_NEW (default 1000),
 * BENCH_DISCOVERY_PAGE (the list API's page size, default 1000), BENCH_DISCOVERY_ROUNDS (default 3).
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createFinality } from "../dist/exports/sqlite.js";
import { sweepOnce } from "../dist/providers/discovery-sweep.js";
import { createGenericLister } from "../dist/providers/generic/generic-lister.js";
import { FakeProvider } from "../dist/testing/fake-provider.js";
import { fmt, median } from "./lib/stats.js";

const JOBS = Number(process.env.BENCH_DISCOVERY_JOBS ?? 100_000);
const NEW = Number(process.env.BENCH_DISCOVERY_NEW ?? 1000);
const PAGE = Number(process.env.BENCH_DISCOVERY_PAGE ?? 1000);
const ROUNDS = Number(process.env.BENCH_DISCOVERY_ROUNDS ?? 3);
console.log(`jobs at the provider: ${JOBS}, new per sweep: ${NEW}, page size: ${PAGE}, rounds: ${ROUNDS}`);

const dir = mkdtempSync(join(tmpdir(), "finality-bench-discovery-"));
const fake = new FakeProvider();
fake.listPageSize = PAGE;
await fake.listen();
const finality = createFinality({ store: { sqlite: join(dir, "ledger.db") }, providers: { acme: {} } });
const lister = createGenericLister("acme", { url: `${fake.url}/jobs?after={cursor}` });
const sweep = () =>
  sweepOnce(finality, {
    provider: "acme",
    lister,
    pagesPerSweep: Number.MAX_SAFE_INTEGER,
    lookbackMs: 48 * 3_600_000,
    settleFromList: true,
  });

let added = 0;
const addJobs = (n) => {
  for (let i = 0; i < n; i++) fake.addJob(`job-${added++}`, [{ afterMs: 0, state: "running" }]);
};

// The ledger knows every job but the new ones: one sweep from the start adopts them all.
const t0 = Date.now();
addJobs(JOBS - NEW);
const seeded = await sweep();
console.log(`seeded: ${seeded.adopted} jobs adopted in ${seeded.pages} pages, ${Date.now() - t0} ms`);

const timings = { cursor: { ms: [], polls: [] }, full: { ms: [], polls: [] } };
async function measure(which) {
  addJobs(NEW);
  if (which === "full")
    await finality.store.transaction((tx) => tx.setDiscoveryCursor("acme", null, Date.now()));
  const calls = fake.listCalls;
  const started = performance.now();
  const result = await sweep();
  timings[which].ms.push(performance.now() - started);
  timings[which].polls.push(fake.listCalls - calls);
  if (result.adopted !== NEW) throw new Error(`${which}: adopted ${result.adopted}, expected ${NEW}`);
}
for (let round = 0; round < ROUNDS; round++) {
  await measure("cursor");
  await measure("full");
}

const row = (name, t) =>
  `${name.padEnd(28)} ${String(median(t.polls)).padStart(6)} list calls  ${fmt(median(t.ms)).padStart(9)} ms`;
console.log(row(`sweep from the cursor`, timings.cursor));
console.log(row(`full relist, no cursor`, timings.full));
console.log(
  `full / cursor: ${fmt(median(timings.full.polls) / median(timings.cursor.polls))}× the list calls, ${fmt(median(timings.full.ms) / median(timings.cursor.ms))}× the time`,
);

await finality.close();
await fake.close();
rmSync(dir, { recursive: true, force: true });
