#!/usr/bin/env node
/**
 * Resident memory of an idle `finality serve` whose SQLite ledger holds many jobs (issue 16:
 * "idle with 1,000,000 jobs ≤ 150 MiB"), beside an idle bare node:http server from the same run.
 *
 * The ledger is filled through the store's own mapping lines (dist/store/tables.js), in one
 * transaction per 50,000 jobs: 97 % settled long ago, 3 % open with their next check due in an
 * hour (so the reconciler has work it is not yet allowed to do). `serve` then starts on that file,
 * and its RSS is sampled once a second for BENCH_IDLE_SECONDS after it listens: idle means no
 * request arrives, but its loops (reconciler, dispatcher, retention, lease sweeper) all run.
 *
 * Knobs: BENCH_JOBS (1000000), BENCH_IDLE_SECONDS (10).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { startServer } from "./lib/processes.js";

const int = (value, fallback) => (value ? Number.parseInt(value, 10) : fallback);
const JOBS = int(process.env.BENCH_JOBS, 1_000_000);
const IDLE_SECONDS = int(process.env.BENCH_IDLE_SECONDS, 10);
const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const CLI = here("../dist/cli/main.js");
const { JOBS: JOBS_TABLE } = await import(here("../dist/store/tables.js"));
const { createSqliteStore } = await import(here("../dist/store/sqlite/sqlite-store.js"));

console.log(`knobs: BENCH_JOBS=${JOBS} BENCH_IDLE_SECONDS=${IDLE_SECONDS}`);
const dir = mkdtempSync(join(tmpdir(), "finality-idle-"));
const file = join(dir, "f.db");

// Migrate with the store itself, then fill with plain better-sqlite3 (the store's per-job
// transactions would take many minutes for a million rows; the rows are the same).
await createSqliteStore({ path: file }).close();
const filledIn = fill(file, JOBS);
console.log(`filled ${JOBS.toLocaleString("en-US")} jobs in ${(filledIn / 1000).toFixed(1)} s`);

const config = join(dir, "finality.config.json");
writeFileSync(
  config,
  JSON.stringify({
    providers: { acme: { type: "generic", webhook: { secrets: ["bench-idle-secret-0123456789"] } } },
  }),
);

const bare = await idleRss(process.execPath, [here("servers/bare-server.js")]);
const finality = await idleRss(process.execPath, [
  CLI,
  "serve",
  "--config",
  config,
  "--port",
  "0",
  "--db",
  file,
]);
console.log(`\nidle RSS after ${IDLE_SECONDS} s (sampled each second; max of the samples)`);
const label = (text) => `  ${text.padEnd(36)}`;
console.log(`${label("bare node:http")}${String(bare).padStart(4)} MiB`);
console.log(
  `${label(`finality serve, ${JOBS.toLocaleString("en-US")} jobs`)}${String(finality).padStart(4)} MiB  (${(finality / bare).toFixed(2)}× bare; target ≤ 150 MiB)`,
);
rmSync(dir, { recursive: true, force: true });

/** Inserts `count` jobs in batches; returns the milliseconds it took. */
function fill(path, count) {
  const started = Date.now();
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = OFF");
  const insert = db.prepare(`INSERT INTO jobs ${JOBS_TABLE.sqlite.insert}`);
  const now = Date.now();
  const batch = db.transaction((from, to) => {
    for (let i = from; i < to; i++) {
      const open = i % 33 === 0;
      insert.run(
        JOBS_TABLE.sqlite.params({
          provider: "acme",
          id: `job-${i}`,
          kind: "render",
          state: open ? "running" : "succeeded",
          version: open ? 2 : 3,
          maxSeq: null,
          maxUpdateTime: null,
          submittedAt: now - 86_400_000,
          updatedAt: now - 3_600_000,
          settledAt: open ? null : now - 3_600_000,
          settledBy: open ? null : "webhook",
          registered: true,
          pollAttempts: 0,
          nextCheckAt: open ? now + 3_600_000 : null,
          stuck: false,
          conflict: false,
          anomaly: null,
          lastPollError: null,
          metadata: { customer: `c${i % 1000}` },
          result: open ? null : { url: `https://example.invalid/out/${i}.png` },
          error: null,
        }),
      );
    }
  });
  for (let from = 0; from < count; from += 50_000) batch(from, Math.min(count, from + 50_000));
  db.close();
  return Date.now() - started;
}

/** Starts a server, samples its VmRSS once a second while it idles, stops it; the max in MiB. */
async function idleRss(command, args) {
  const server = await startServer(command, args);
  let max = 0;
  for (let s = 0; s < IDLE_SECONDS; s++) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    max = Math.max(max, rssMiB(server.pid));
  }
  await server.stop();
  return max;
}

function rssMiB(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  return match ? Math.round(Number(match[1]) / 1024) : Number.NaN;
}
