#!/usr/bin/env node
/**
 * Instructions per webhook in `finality serve`, counted by `valgrind --tool=callgrind`: a figure
 * that the load of a shared machine cannot move, unlike req/s. Used to compare two builds (the
 * commit before a change and after it) when the machine is too busy for `npm run bench -- webhooks`.
 *
 * For each build, `serve` runs under callgrind twice: once receiving BENCH_WEBHOOKS signed
 * webhooks (running, running, succeeded per job, sent one at a time over keep-alive), once
 * receiving none. The difference of the two totals, divided by the count, is the cost of one
 * webhook end to end in the server process: HTTP parsing, verification, the transaction, the
 * answer, the log line. Start-up and shutdown cancel out.
 *
 *   node bench/intake-instructions.js                         # this build (dist/)
 *   BENCH_BASELINE_DIST=/path/to/old/dist node bench/intake-instructions.js
 *
 * Knobs: BENCH_WEBHOOKS (3000), BENCH_BASELINE_DIST. Not run by `npm run bench` (it takes minutes
 * under valgrind and needs valgrind installed).
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { signStandardWebhook } from "../dist/webhooks/schemes/standard-webhooks/node.js";

const COUNT = Number.parseInt(process.env.BENCH_WEBHOOKS ?? "3000", 10);
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const builds = [["this build", here("../dist")]];
if (process.env.BENCH_BASELINE_DIST) builds.unshift(["baseline", process.env.BENCH_BASELINE_DIST]);

if (spawnSync("valgrind", ["--version"]).status !== 0) {
  console.error("valgrind is not installed (apt-get install valgrind)");
  process.exit(1);
}
console.log(
  `knobs: BENCH_WEBHOOKS=${COUNT}${process.env.BENCH_BASELINE_DIST ? " BENCH_BASELINE_DIST set" : ""}`,
);

const results = [];
for (const [name, dist] of builds) {
  const idle = await instructions(dist, 0);
  const busy = await instructions(dist, COUNT);
  const perWebhook = (busy - idle) / COUNT;
  results.push({ name, perWebhook });
  console.log(
    `  ${name.padEnd(12)} ${Math.round(perWebhook).toLocaleString("en-US").padStart(10)} instructions/webhook`,
  );
}
if (results.length === 2) {
  const [before, after] = results;
  console.log(
    `  ratio this/baseline: ${(after.perWebhook / before.perWebhook).toFixed(3)} (below 1: fewer instructions)`,
  );
}

/** Total instructions `serve` (of `dist`) executes, start to exit, receiving `count` webhooks. */
async function instructions(dist, count) {
  const dir = mkdtempSync(join(tmpdir(), "finality-callgrind-"));
  const config = join(dir, "finality.config.json");
  writeFileSync(
    config,
    JSON.stringify({ providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } } }),
  );
  const out = join(dir, "callgrind.out");
  const child = spawn(
    "valgrind",
    [
      "--tool=callgrind",
      `--callgrind-out-file=${out}`,
      process.execPath,
      join(dist, "cli/main.js"),
      "serve",
      "--config",
      config,
      "--port",
      "0",
      "--db",
      join(dir, "f.db"),
    ],
    { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, FINALITY_LOG_LEVEL: "info" } },
  );
  child.stderr.resume();
  const url = await new Promise((resolve, reject) => {
    let seen = "";
    child.stdout.on("data", (data) => {
      seen += data.toString();
      const match = /listening on (\S+)/.exec(seen);
      if (match) resolve(match[1]);
    });
    child.on("exit", (code) => reject(new Error(`serve exited ${code} before listening`)));
  });
  const timestampSeconds = Math.floor(Date.now() / 1000);
  for (let i = 0; i < count; i++) {
    const job = Math.floor(i / 3);
    const step = i % 3;
    const body = JSON.stringify(
      step === 2
        ? { jobId: `job-${job}`, state: "succeeded", seq: 3, result: { url: `https://example.com/${job}` } }
        : { jobId: `job-${job}`, state: "running", seq: step + 1 },
    );
    const id = `msg-${i}`;
    const headers = signStandardWebhook({ id, timestampSeconds, body, secret: SECRET });
    const response = await fetch(`${url}/webhooks/acme`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body,
    });
    if (response.status !== 200) throw new Error(`webhook ${i} answered ${response.status}`);
    await response.arrayBuffer();
  }
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
  // callgrind writes one file per process (node may fork none, but be safe): sum them all.
  let total = 0;
  for (const file of readdirSync(dir).filter((f) => f.startsWith("callgrind.out"))) {
    const summary = /^summary:\s+(\d+)/m.exec(readFileSync(join(dir, file), "utf8"));
    if (summary) total += Number(summary[1]);
  }
  rmSync(dir, { recursive: true, force: true });
  if (total === 0) throw new Error("callgrind wrote no summary");
  return total;
}
