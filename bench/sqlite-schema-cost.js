#!/usr/bin/env node
/**
 * What each index and trigger of the SQLite schema costs a webhook: SQLite's own instructions per
 * ingest (better-sqlite3's library, SQLite inside it), counted by callgrind, with the whole
 * schema, with each index or trigger on the ingest path's tables dropped in turn, and with all of
 * them dropped (the statements alone). The ingest is the library's (`createFinality`, group commit,
 * NORMAL), driven in-process 16 at a time: running 1, running 2, succeeded 3 per job, every
 * delivery and job id unique, as `intake-callgrind.js` sends them over HTTP. SQLite's count does not
 * depend on V8's tier-up or the machine's load, so one run per variant is enough.
 *
 *   npm run build && node bench/sqlite-schema-cost.js
 *
 * With BENCH_EFFECT=1 every settling ingest enqueues one effect (a handler that returns at once,
 * `on: succeeded`), and a dispatcher poked by the enqueues, as `serve`'s is, claims, delivers and
 * finishes it: the outbox and its indexes and triggers are counted too, per webhook (one effect per
 * three webhooks).
 *
 * Knobs: BENCH_WEBHOOKS (3000, counted), BENCH_WARMUP (3000, uncounted), BENCH_VARIANTS (a comma
 * list: all, none, or an index or trigger name to drop), BENCH_EFFECT. Needs valgrind. Not run by
 * `npm run bench`.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { createFinality } from "../dist/exports/sqlite.js";
import { ingestAll, libraryObservations, openLedger } from "./lib/library-ingest.js";

const COUNT = Number.parseInt(process.env.BENCH_WEBHOOKS ?? "3000", 10);
const WARMUP = Number.parseInt(process.env.BENCH_WARMUP ?? "3000", 10);
const IN_FLIGHT = 16;
/** The tables an ingest writes (settlements through the settling trigger, row_counts through the counting ones). */
const EFFECT = process.env.BENCH_EFFECT === "1";
const INGEST_TABLES = [
  "jobs",
  "events",
  "deliveries",
  "settlements",
  "row_counts",
  ...(EFFECT ? ["outbox"] : []),
];

if (process.argv[2] === "child") await child(process.argv[3], process.argv[4]);
else await parent();

async function parent() {
  if (spawnSync("valgrind", ["--version"]).error) {
    console.error("valgrind is not installed (apt-get install valgrind)");
    process.exit(1);
  }
  const objects = await schemaObjects();
  const variants = process.env.BENCH_VARIANTS?.split(",").map((v) => v.trim()) ?? [
    "all",
    ...objects.map((o) => o.name),
    "none",
  ];
  console.log(
    `knobs: BENCH_WEBHOOKS=${COUNT} BENCH_WARMUP=${WARMUP} BENCH_EFFECT=${EFFECT ? 1 : 0}; SQLite instructions per webhook`,
  );
  const all = variants.includes("all") ? await measure("all") : undefined;
  if (all !== undefined) console.log(`  ${"whole schema".padEnd(40)} ${fmt(all).padStart(8)}`);
  for (const variant of variants.filter((v) => v !== "all")) {
    const perWebhook = await measure(variant);
    const what = variant === "none" ? "no index or trigger but the keys" : `without ${variant}`;
    const saved = all === undefined ? "" : `  (${fmt(all - perWebhook).padStart(7)} for it)`;
    console.log(`  ${what.padEnd(40)} ${fmt(perWebhook).padStart(8)}${saved}`);
  }
}

/** The indexes and triggers on the tables an ingest writes (not the keys SQLite makes itself). */
async function schemaObjects() {
  const dir = mkdtempSync(join(tmpdir(), "finality-schema-"));
  try {
    const file = join(dir, "schema.db");
    await createFinality({ store: { sqlite: file } }).close();
    const db = new Database(file, { readonly: true });
    const placeholders = INGEST_TABLES.map(() => "?").join(", ");
    const rows = db
      .prepare(
        `SELECT type, name FROM sqlite_master WHERE type IN ('index', 'trigger') AND sql IS NOT NULL
         AND tbl_name IN (${placeholders}) ORDER BY tbl_name, type, name`,
      )
      .all(...INGEST_TABLES);
    db.close();
    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** SQLite's instructions per webhook, counted in a child under callgrind, with `variant` dropped. */
async function measure(variant) {
  const dir = mkdtempSync(join(tmpdir(), "finality-schema-cost-"));
  try {
    const script = fileURLToPath(import.meta.url);
    const child = spawn(
      "valgrind",
      [
        "--tool=callgrind",
        "--instr-atstart=no",
        `--callgrind-out-file=${join(dir, "callgrind.out.%p")}`,
        process.execPath,
        script,
        "child",
        variant,
        join(dir, "ledger.db"),
      ],
      { stdio: ["pipe", "pipe", "pipe"] },
    );
    // valgrind's banner and summary go to stderr: kept, and shown only when the child fails.
    let stderr = "";
    child.stderr.on("data", (data) => {
      stderr = (stderr + data.toString()).slice(-8192);
    });
    child.once("exit", (code) => {
      if (code !== 0) console.error(`${variant}: the child exited ${code}\n${stderr}`);
    });
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const expect = async (word) => {
      const { value, done } = await lines.next();
      if (done || value !== word) throw new Error(`${variant}: expected "${word}", got ${value}`);
    };
    await expect("warm");
    control(child.pid, "on");
    child.stdin.write("go\n");
    await expect("done");
    control(child.pid, "off");
    child.stdin.end("exit\n");
    await new Promise((resolve) => child.once("exit", resolve));
    let sqlite = 0;
    for (const file of readdirSync(dir).filter((f) => f.startsWith("callgrind.out"))) {
      sqlite += sqliteInstructions(join(dir, file));
    }
    return sqlite / COUNT;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function sqliteInstructions(file) {
  const done = spawnSync("callgrind_annotate", ["--inclusive=no", "--threshold=100", file], {
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
  });
  if (done.status !== 0) throw new Error(`callgrind_annotate: ${done.stderr}`);
  let total = 0;
  for (const line of done.stdout.split("\n")) {
    const match = /^\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)$/.exec(line);
    if (match?.[2].includes("better_sqlite3")) total += Number(match[1].replaceAll(",", ""));
  }
  return total;
}

function control(pid, state) {
  const done = spawnSync("callgrind_control", ["-i", state, String(pid)], { encoding: "utf8" });
  if (done.status !== 0) throw new Error(`callgrind_control -i ${state}: ${done.stderr}${done.stdout}`);
}

/** In the child: migrate, drop the variant's objects, warm up, then ingest COUNT when told. */
async function child(variant, file) {
  await createFinality({ store: { sqlite: file } }).close();
  const db = new Database(file);
  const objects = db
    .prepare(
      "SELECT type, name, tbl_name FROM sqlite_master WHERE type IN ('index', 'trigger') AND sql IS NOT NULL",
    )
    .all()
    .filter((o) => INGEST_TABLES.includes(o.tbl_name));
  const dropped = variant === "none" ? objects : objects.filter((o) => o.name === variant);
  if (variant !== "all" && dropped.length === 0) throw new Error(`no index or trigger named ${variant}`);
  if (variant === "all") dropped.length = 0;
  for (const { type, name } of dropped) db.exec(`DROP ${type.toUpperCase()} "${name}"`);
  db.close();
  const ledger = openLedger(file, EFFECT);
  const input = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  await ingestAll(ledger.finality, libraryObservations("warm", WARMUP), IN_FLIGHT);
  await ledger.drain();
  process.stdout.write("warm\n");
  await input.next();
  await ingestAll(ledger.finality, libraryObservations("counted", COUNT), IN_FLIGHT);
  // What is still due is delivered inside the window: every counted effect is finished in it.
  await ledger.drain();
  process.stdout.write("done\n");
  await input.next();
  await ledger.close();
}

function fmt(n) {
  return Math.round(n).toLocaleString("en-US");
}
