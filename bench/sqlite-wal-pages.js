#!/usr/bin/env node
/**
 * Which pages a webhook dirties: the WAL frames each group commit appends, named by the table or
 * index that owns each page. The kernel time that callgrind does not count (two pwrite64 per
 * frame, then the checkpoint's writes) grows with these frames, and unlike req/s the count does
 * not move with the machine's load.
 *
 * The ingest is the library's (`createFinality`, group commit, NORMAL), driven in-process 16 at a
 * time with `intake-callgrind.js`'s workload (running 1, running 2, succeeded 3 per job, every
 * delivery and job id unique). After the warm-up the WAL is checkpointed and truncated, and a
 * second connection holds a read transaction for the window so that no checkpoint can restart
 * the WAL: every frame the window writes stays in the file. The frames are then read from the
 * WAL (a 24-byte header per frame: the page number, and the database size on a commit's last
 * frame) and each page is named through the `dbstat` table; pages it does not list are page 1's
 * header, pointer-map pages (auto_vacuum) or free pages.
 *
 *   npm run build && node bench/sqlite-wal-pages.js
 *
 * Knobs: BENCH_WEBHOOKS (3000, counted), BENCH_WARMUP (3000, uncounted), BENCH_EFFECT (1: an
 * effect on `succeeded`, delivered in-process by a dispatcher poked by each enqueue, as `serve`
 * runs it). Not run by `npm run bench`.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { ingestAll, libraryObservations, openLedger } from "./lib/library-ingest.js";

const COUNT = Number.parseInt(process.env.BENCH_WEBHOOKS ?? "3000", 10);
const WARMUP = Number.parseInt(process.env.BENCH_WARMUP ?? "3000", 10);
const EFFECT = process.env.BENCH_EFFECT === "1";
const IN_FLIGHT = 16;

const dir = mkdtempSync(join(tmpdir(), "finality-wal-pages-"));
try {
  const file = join(dir, "ledger.db");
  const ledger = openLedger(file, EFFECT);
  await ingestAll(ledger.finality, libraryObservations("warm", WARMUP), IN_FLIGHT);
  await ledger.drain();

  const reader = new Database(file);
  const truncated = reader.pragma("wal_checkpoint(TRUNCATE)")[0];
  if (truncated.busy !== 0) throw new Error("the WAL could not be truncated: a writer was busy");
  // One frame so the reader's snapshot is on the WAL, then the read that pins it.
  reader.exec("CREATE TABLE IF NOT EXISTS wal_pages_pin (x); DROP TABLE wal_pages_pin");
  const framesBefore = frames(`${file}-wal`).length;
  reader.exec("BEGIN");
  reader.prepare("SELECT count(*) FROM sqlite_schema").get();

  await ingestAll(ledger.finality, libraryObservations("counted", COUNT), IN_FLIGHT);
  await ledger.drain();

  reader.exec("COMMIT");
  const written = frames(`${file}-wal`).slice(framesBefore);
  const owner = new Map(reader.prepare("SELECT pageno, name FROM dbstat").raw().all());
  reader.close();
  await ledger.close();

  const commits = written.filter((f) => f.commit).length;
  const byOwner = new Map();
  for (const { page } of written) {
    const name = owner.get(page) ?? (page === 1 ? "page 1 (header)" : "pointer map or free");
    byOwner.set(name, (byOwner.get(name) ?? 0) + 1);
  }
  console.log(
    `knobs: BENCH_WEBHOOKS=${COUNT} BENCH_WARMUP=${WARMUP} BENCH_EFFECT=${EFFECT ? 1 : 0}\n` +
      `${written.length} frames in ${commits} commits: ${fmt(written.length / commits)} pages per commit, ` +
      `${fmt(written.length / COUNT)} per webhook, ${fmt(COUNT / commits)} webhooks per commit`,
  );
  for (const [name, n] of [...byOwner].sort((a, b) => b[1] - a[1])) {
    console.log(
      `  ${name.padEnd(36)} ${fmt(n / commits).padStart(6)} per commit  ${fmt(n / COUNT).padStart(6)} per webhook`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/** The WAL's frames in order: page number, and whether the frame ends a commit. */
function frames(walFile) {
  const wal = readFileSync(walFile);
  const pageSize = wal.readUInt32BE(8);
  const salt1 = wal.readUInt32BE(16);
  const salt2 = wal.readUInt32BE(20);
  const out = [];
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
    // A frame whose salts differ from the header's is left from before the last restart.
    if (wal.readUInt32BE(at + 8) !== salt1 || wal.readUInt32BE(at + 12) !== salt2) break;
    out.push({ page: wal.readUInt32BE(at), commit: wal.readUInt32BE(at + 4) !== 0 });
  }
  return out;
}

function fmt(n) {
  return n.toFixed(2);
}
