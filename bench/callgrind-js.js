#!/usr/bin/env node
/**
 * Names the JavaScript in a callgrind profile. Callgrind sees V8's compiled code as bare
 * addresses (`0x…`); node's `--perf-basic-prof` writes where each function's code lies
 * (/tmp/perf-<pid>.map). This reads a callgrind output, maps those addresses to functions, and
 * prints instructions per webhook, self and inclusive (what the function and all it called,
 * native code included), by function and by file.
 *
 *   BENCH_NODE_FLAGS=--perf-basic-prof BENCH_KEEP_PROFILE=/tmp/p BENCH_RUNS=1 \
 *     BENCH_SERVERS=finality node bench/intake-callgrind.js
 *   node bench/callgrind-js.js /tmp/p/finality.callgrind.out.<pid> /tmp/p/finality.perf-<pid>.map
 *
 * Knobs: BENCH_WEBHOOKS (3000: the window's webhooks, to divide by), BENCH_TOP (40 rows),
 * BENCH_MATCH (a regular expression: only functions whose name or file matches), BENCH_CALLERS (a
 * regular expression: for each function it matches, who called it and what those calls cost),
 * BENCH_CALLEES (the same, for what each function it matches called).
 * Inclusive figures of a function that is on the stack twice (recursion) count its work twice;
 * an async function's inclusive figure holds each of its resumptions (they run its code).
 */
import { readFileSync } from "node:fs";

const [profilePath, mapPath] = process.argv.slice(2);
if (!profilePath || !mapPath) {
  console.error("usage: node bench/callgrind-js.js <callgrind.out> <perf-<pid>.map>");
  process.exit(2);
}
const WEBHOOKS = Number(process.env.BENCH_WEBHOOKS ?? 3000);
const TOP = Number(process.env.BENCH_TOP ?? 40);
const match = process.env.BENCH_MATCH ? new RegExp(process.env.BENCH_MATCH) : null;

// The perf map: `start size name`, hex; sorted by start for a binary search.
const code = readFileSync(mapPath, "utf8")
  .split("\n")
  .filter(Boolean)
  .map((line) => {
    const [start, size, ...name] = line.split(" ");
    return {
      start: Number.parseInt(start, 16),
      end: Number.parseInt(start, 16) + Number.parseInt(size, 16),
      name: tidy(name.join(" ")),
    };
  })
  .sort((a, b) => a.start - b.start);

function jsName(address) {
  let lo = 0;
  let hi = code.length - 1;
  let found = null;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (code[mid].start <= address) {
      found = code[mid];
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found && address < found.end ? found.name : null;
}

/** `JS:*deliverOnce file:///…/dist/engine/dispatcher.js:50:24` → `deliverOnce dist/engine/dispatcher.js:50`. */
function tidy(name) {
  return name
    .replace(/^(LazyCompile|Function|JS|Builtin|Script):[*~^+]?/, "")
    .replace(/file:\/\/\S*?\/(dist|node_modules)\//, "$1/")
    .replace(/:(\d+):\d+$/, ":$1");
}

// Callgrind's format: `fn=(id) name` opens a function (the name only the first time its id
// appears); cost lines follow (`position cost`); `calls=` says the next cost line is a call's
// inclusive cost, to the function named by the last `cfn=`.
const names = new Map();
const self = new Map();
const inclusive = new Map();
/** Inclusive cost of calls, by caller and callee (`caller\u0000callee`). */
const edges = new Map();
/** How many calls, by caller and callee. */
const callCounts = new Map();
let fn = "";
let callee = "";
let callLine = false;
const add = (map, key, n) => map.set(key, (map.get(key) ?? 0) + n);
for (const line of readFileSync(profilePath, "utf8").split("\n")) {
  if (line.startsWith("fn=")) {
    fn = named(line.slice(3));
  } else if (line.startsWith("cfn=")) {
    callee = named(line.slice(4));
  } else if (line.startsWith("calls=")) {
    callLine = true;
    add(callCounts, `${fn}\u0000${callee}`, Number(line.slice(6).split(" ")[0]));
  } else if (/^[+\-*0-9]/.test(line)) {
    const cost = Number(line.split(" ")[1] ?? 0);
    if (callLine) {
      callLine = false;
      // Inclusive cost of a call belongs to the caller's inclusive figure (not its self).
      if (callee !== fn) add(inclusive, fn, cost);
      add(edges, `${fn}\u0000${callee}`, cost);
    } else {
      add(self, fn, cost);
      add(inclusive, fn, cost);
    }
  }
}

function named(text) {
  const m = /^\((\d+)\)(?: (.*))?$/.exec(text);
  if (!m) return text;
  if (m[2] !== undefined) names.set(m[1], m[2]);
  return names.get(m[1]) ?? text;
}

// Addresses to JavaScript functions; everything else keeps callgrind's name.
const nameOf = (name) => {
  const address = /^0x[0-9a-f]+$/i.test(name) ? Number.parseInt(name, 16) : null;
  const js = address === null ? null : jsName(address);
  return js ?? (address === null ? name : "(JIT code the map does not name)");
};
const byFunction = { self: new Map(), inclusive: new Map() };
const byFile = new Map();
for (const [map, into] of [
  [self, byFunction.self],
  [inclusive, byFunction.inclusive],
]) {
  for (const [name, n] of map) {
    const key = nameOf(name);
    add(into, key, n);
    const js = /^0x/i.test(name) && !key.startsWith("(JIT");
    if (map === self) add(byFile, js ? key.replace(/^.* (\S+):\d+$/, "$1") : "(native)", n);
  }
}

const per = (n) =>
  Math.round(n / WEBHOOKS)
    .toLocaleString("en-US")
    .padStart(10);
const rows = (map) =>
  [...map]
    .filter(([name]) => match === null || match.test(name))
    .sort((a, b) => b[1] - a[1])
    .slice(0, TOP);
const total = [...self.values()].reduce((a, b) => a + b, 0);
console.log(`${per(total)} instructions per webhook in the profile (${WEBHOOKS} webhooks)`);
console.log("\ninclusive per webhook, by function");
for (const [name, n] of rows(byFunction.inclusive)) console.log(`${per(n)}  ${name}`);
console.log("\nself per webhook, by function");
for (const [name, n] of rows(byFunction.self)) console.log(`${per(n)}  ${name}`);
console.log("\nself per webhook, by file (compiled JavaScript; native code as one line)");
for (const [name, n] of rows(byFile)) console.log(`${per(n)}  ${name}`);

for (const [knob, side, arrow, title] of [
  ["BENCH_CALLERS", 1, "<-", "calls to functions matching {}, by caller"],
  ["BENCH_CALLEES", 0, "->", "calls from functions matching {}, by callee"],
]) {
  if (!process.env[knob]) continue;
  const wanted = new RegExp(process.env[knob]);
  const found = new Map();
  const calls = new Map();
  for (const [edge, n] of edges) {
    const ends = edge.split("\u0000").map(nameOf);
    const [near, far] = side === 1 ? ends.reverse() : ends;
    if (!wanted.test(near)) continue;
    add(found, `${near}  ${arrow}  ${far}`, n);
    add(calls, `${near}  ${arrow}  ${far}`, callCounts.get(edge) ?? 0);
  }
  console.log(`\n${title.replace("{}", String(wanted))} (inclusive per webhook; calls per webhook)`);
  for (const [name, n] of [...found].sort((a, b) => b[1] - a[1]).slice(0, TOP))
    console.log(`${per(n)}  ${((calls.get(name) ?? 0) / WEBHOOKS).toFixed(2).padStart(6)}  ${name}`);
}
