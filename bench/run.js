#!/usr/bin/env node
/**
 * `npm run bench`: builds (see package.json), then runs every `bench/*.bench.js` file, one after
 * another, each in its own Node process, and stops at the first that fails.
 *
 * Convention for whoever adds a benchmark:
 * - name it `bench/<topic>.bench.js` (plain ESM JavaScript: Node 20 cannot run .ts, so import the
 *   built code from `../dist/...`); helpers that are not benchmarks go under `bench/lib/`;
 * - print human-readable results on stdout; exit non-zero only when the benchmark could not run
 *   (a slow result is a result, not a failure);
 * - read knobs from BENCH_* environment variables and print the ones used.
 *
 * `npm run bench -- webhooks` runs only the files whose name contains "webhooks"; a filter that is
 * a benchmark's whole name (`postgres`) runs that one alone, not `postgres-driver` too.
 */
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const filters = process.argv.slice(2);
const files = readdirSync(here)
  .filter((file) => file.endsWith(".bench.js"))
  .filter((file) => filters.length === 0 || filters.some((filter) => matches(file, filter)))
  .sort();

/** A filter that names a benchmark exactly (`postgres`) runs that one only, else every file containing it. */
function matches(file, filter) {
  const exact = `${filter}.bench.js`;
  return readdirSync(here).includes(exact) ? file === exact : file.includes(filter);
}

if (files.length === 0) {
  console.error(`no bench/*.bench.js file matches ${filters.join(", ") || "(all)"}`);
  process.exit(1);
}
for (const file of files) {
  console.log(`\n=== ${file} ===`);
  const result = spawnSync(process.execPath, [join(here, file)], { stdio: "inherit" });
  if (result.status !== 0) {
    console.error(`${file} failed (${result.status ?? result.signal})`);
    process.exit(1);
  }
}
