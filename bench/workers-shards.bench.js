/**
 * Signed webhooks per second through the Finality Worker in workerd (Miniflare, on this machine)
 * with the ledger on 1, 2 and 4 Durable Objects (`cloudflare.shards`), 64 in flight, each run
 * printed as a ratio to 1 shard in the same run. The Worker verifies each webhook, routes it to
 * its job's shard, which verifies again and commits it. Requests go to the Worker's own socket
 * (no Miniflare entry worker in front), from one Node fetch client.
 *
 * What bounds it: the CPU each process used while sending is printed beside the figure, the
 * client (this Node process) and workerd (the Worker and every object: one process). A process
 * near 100% of a core is the bound.
 *
 * Knobs: BENCH_SHARD_WEBHOOKS (default 3000 per run), BENCH_SHARD_CONCURRENCY (default 64),
 * BENCH_SHARD_COUNTS (default "1,2,4"), BENCH_SHARD_ROUNDS (default 2, best kept).
 */
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { Miniflare } from "miniflare";
import { Webhook } from "standardwebhooks";
import { fmt } from "./lib/stats.js";

const COUNT = Number(process.env.BENCH_SHARD_WEBHOOKS ?? 3000);
const CONCURRENCY = Number(process.env.BENCH_SHARD_CONCURRENCY ?? 64);
const SHARDS = (process.env.BENCH_SHARD_COUNTS ?? "1,2,4").split(",").map(Number);
const ROUNDS = Number(process.env.BENCH_SHARD_ROUNDS ?? 2);
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const TOKEN = "bench-api-token-0123456789";
console.log(
  `webhooks: ${COUNT} per run, ${CONCURRENCY} in flight, shards ${SHARDS.join(", ")}, best of ${ROUNDS}`,
);

// Bundled from the source, as wrangler would (esbuild reads TypeScript): no build step needed.
const script = (
  await build({
    entryPoints: [fileURLToPath(new URL("../src/cloudflare/index.ts", import.meta.url))],
    bundle: true,
    write: false,
    format: "esm",
    platform: "browser",
    conditions: ["workerd", "worker", "browser"],
    target: "es2022",
    logLevel: "silent",
  })
).outputFiles[0].text;

function webhooks(prefix) {
  const signer = new Webhook(SECRET);
  const now = new Date();
  return Array.from({ length: COUNT }, (_, i) => {
    const body = JSON.stringify({ jobId: `${prefix}-${i}`, state: "succeeded", result: { n: i } });
    const id = `${prefix}-msg-${i}`;
    return {
      body,
      headers: {
        "content-type": "application/json",
        "webhook-id": id,
        "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
        "webhook-signature": signer.sign(id, now, body),
      },
    };
  });
}

/** CPU milliseconds (user + system) of every workerd process this one started. */
function workerdCpuMs() {
  let total = 0;
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const command = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      if (command !== "workerd" || Number(fields[1]) !== process.pid) continue;
      total += ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

async function run(shards, round) {
  const config = {
    providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } },
    cloudflare: { shards },
    log: { level: "warn" },
  };
  const mf = new Miniflare({
    modules: true,
    script,
    compatibilityDate: "2025-09-01",
    unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }],
    bindings: { FINALITY_CONFIG: JSON.stringify(config), FINALITY_API_TOKEN: TOKEN },
    durableObjects: { FINALITY_LEDGER: { className: "FinalityLedger", useSQLite: true } },
  });
  try {
    const base = await mf.unsafeGetDirectURL();
    const url = new URL("/webhooks/acme", base);
    // Warm every shard's object (constructor, migrations) before timing.
    await Promise.all(
      webhooks(`warm-${shards}-${round}`)
        .slice(0, 64)
        .map((w) => fetch(url, { method: "POST", ...w }).then((r) => r.arrayBuffer())),
    );
    const requests = webhooks(`s${shards}-r${round}`);
    let next = 0;
    let failures = 0;
    const clientBefore = process.cpuUsage();
    const workerdBefore = workerdCpuMs();
    const started = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < requests.length) {
          const { body, headers } = requests[next++];
          const response = await fetch(url, { method: "POST", headers, body });
          await response.arrayBuffer();
          if (response.status !== 200) failures++;
        }
      }),
    );
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    const client = process.cpuUsage(clientBefore);
    const workerd = workerdCpuMs() - workerdBefore;
    if (failures > 0) throw new Error(`${failures} webhooks were not answered 200`);
    return {
      rate: (requests.length / ms) * 1000,
      clientCpu: (client.user + client.system) / 1000 / ms,
      workerdCpu: workerd / ms,
    };
  } finally {
    await mf.dispose();
  }
}

const best = new Map();
for (let round = 1; round <= ROUNDS; round++) {
  for (const shards of SHARDS) {
    const result = await run(shards, round);
    const kept = best.get(shards);
    if (kept === undefined || result.rate > kept.rate) best.set(shards, result);
    console.log(
      `round ${round}, ${shards} shard(s): ${fmt(result.rate, 0)} webhooks/s; CPU: client ${fmt(result.clientCpu * 100, 0)}%, workerd ${fmt(result.workerdCpu * 100, 0)}% of a core`,
    );
  }
}
const baseline = best.get(SHARDS[0]).rate;
console.log("");
for (const [shards, result] of best)
  console.log(
    `${shards} shard(s): ${fmt(result.rate, 0)} webhooks/s, ${fmt(result.rate / baseline, 2)}× ${SHARDS[0]} shard(s) (client ${fmt(result.clientCpu * 100, 0)}%, workerd ${fmt(result.workerdCpu * 100, 0)}% of a core)`,
  );
