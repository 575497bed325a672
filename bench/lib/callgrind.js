import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** Exits with a message when valgrind's tools are missing. */
export function requireValgrind() {
  for (const tool of ["valgrind", "callgrind_control"]) {
    if (spawnSync(tool, ["--version"]).error) {
      console.error(`${tool} is not installed (apt-get install valgrind)`);
      process.exit(1);
    }
  }
}

/** valgrind's arguments for a node server whose counting a window opens (`control`). */
export function callgrindArgs(dir) {
  return [
    "--tool=callgrind",
    "--instr-atstart=no",
    `--callgrind-out-file=${join(dir, "callgrind.out.%p")}`,
    process.execPath,
    "--no-concurrent-recompilation",
  ];
}

/** Opens (`on`) or closes (`off`) the counting window of a process under callgrind. */
export function control(pid, state) {
  const done = spawnSync("callgrind_control", ["-i", state, String(pid)], { encoding: "utf8" });
  if (done.status !== 0) throw new Error(`callgrind_control -i ${state}: ${done.stderr}${done.stdout}`);
}

/** The instructions counted in `dir`'s callgrind files (every thread), and where they ran. */
export function countedIn(dir) {
  let total = 0;
  const parts = { compiler: 0, gc: 0, sqlite: 0 };
  const files = readdirSync(dir).filter((f) => f.startsWith("callgrind.out"));
  for (const file of files) {
    const summary = /^totals:\s+(\d+)/m.exec(readFileSync(join(dir, file), "utf8"));
    if (summary) total += Number(summary[1]);
    for (const [part, n] of Object.entries(breakdown(join(dir, file)))) parts[part] += n;
  }
  return { total, parts, files };
}

/**
 * Instructions by where they ran, from callgrind_annotate's per-function totals: V8's optimizing
 * compilers (tier-up still going on inside the window: it varies from run to run, so a change is
 * best judged on the rest), its garbage collector, and SQLite (better-sqlite3's library).
 */
export function breakdown(file) {
  const out = { compiler: 0, gc: 0, sqlite: 0 };
  const done = spawnSync("callgrind_annotate", ["--inclusive=no", "--threshold=100", file], {
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
  });
  if (done.status !== 0) return out;
  for (const line of done.stdout.split("\n")) {
    const match = /^\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)$/.exec(line);
    if (match === null || match[2].includes("PROGRAM TOTALS")) continue;
    const n = Number(match[1].replaceAll(",", ""));
    const where = match[2];
    if (/compiler::|maglev::|Compiler|turboshaft/i.test(where)) out.compiler += n;
    else if (/Marking|Sweep|Scaveng|heap::|Heap::|Evacuat|GCTracer/.test(where)) out.gc += n;
    else if (where.includes("better_sqlite3")) out.sqlite += n;
  }
  return out;
}
