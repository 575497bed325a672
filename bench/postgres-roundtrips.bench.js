/**
 * Round trips to PostgreSQL per webhook: one `finality serve` on PostgreSQL behind a counting TCP
 * proxy (bench/lib/counting-proxy.js), sent signed webhooks by node:http with 1 and then 16 in
 * flight. Prints round trips (client sends after it last heard from the server: a pipelined
 * batch counts once) and statements (Query and Sync messages) per webhook, and webhooks/s. The
 * counts include whatever else the replica sends meanwhile (dispatcher, pollers): it is idle
 * work, a few statements a second.
 *
 * Knobs: BENCH_PG_URL (postgres://postgres@127.0.0.1:5432/test), BENCH_RT_WEBHOOKS (1500 per
 * measure), BENCH_RT_INFLIGHT (1,16), BENCH_RT_CONFIG (JSON merged into the store settings),
 * BENCH_RT_EFFECT (1: every succeeded job fires one URL effect to a bare local receiver; set
 * BENCH_RT_WEBHOOKS=3000 so that each measure holds one block of jobs, one effect in three
 * webhooks), BENCH_RT_CLI (another build's `cli/main.js`, to compare).
 */
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { countingProxy } from "./lib/counting-proxy.js";
import { CLI } from "./lib/finality-serve.js";
import { BENCH_SECRET, writePresigned } from "./lib/presign.js";
import { startServer } from "./lib/processes.js";

const URL_ = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const WEBHOOKS = Number(process.env.BENCH_RT_WEBHOOKS ?? 1500);
const IN_FLIGHT = (process.env.BENCH_RT_INFLIGHT ?? "1,16").split(",").map(Number);
const EXTRA = JSON.parse(process.env.BENCH_RT_CONFIG ?? "{}");
const cli = process.env.BENCH_RT_CLI ?? CLI;
// Where the effect is delivered (BENCH_RT_EFFECT): a bare server, on loopback.
const receiver = process.env.BENCH_RT_EFFECT
  ? await startServer(process.execPath, [new URL("./servers/bare-server.js", import.meta.url).pathname])
  : null;
const schema = `finality_rt_${process.pid}`;
const dir = mkdtempSync(join(tmpdir(), "finality-bench-rt-"));
const admin = new pg.Client({ connectionString: URL_ });
await admin.connect();

const target = new URL(URL_);
const proxy = await countingProxy({ host: target.hostname, port: Number(target.port || 5432) });
const config = join(dir, "config.json");
writeFileSync(
  config,
  JSON.stringify({
    store: { postgres: proxy.url(URL_), schema, ...EXTRA },
    providers: { acme: { type: "generic", webhook: { secrets: [BENCH_SECRET] } } },
    ...(receiver
      ? { effects: [{ name: "notify", url: receiver.url, secret: BENCH_SECRET, on: ["succeeded"] }] }
      : {}),
  }),
);
const server = await startServer(process.execPath, [cli, "serve", "--config", config, "--port", "0"], {
  FINALITY_LOG_LEVEL: "warn",
});

const file = join(dir, "requests.tsv");
await writePresigned(file, { count: WEBHOOKS * (IN_FLIGHT.length + 1), prefix: `rt${process.pid}` });
const lines = readFileSync(file, "utf8").trimEnd().split("\n");
const agent = new http.Agent({ keepAlive: true, maxSockets: Math.max(...IN_FLIGHT) });

function post(line) {
  const [id, timestamp, signature, body] = line.split("\t");
  const request = http.request(`${server.url}/webhooks/acme`, {
    method: "POST",
    agent,
    headers: {
      "content-type": "application/json",
      "webhook-id": id,
      "webhook-timestamp": timestamp,
      "webhook-signature": signature,
    },
  });
  request.end(body);
  return once(request, "response").then(async ([response]) => {
    response.resume();
    await once(response, "end");
    if (response.statusCode >= 300) throw new Error(`webhook ${id}: HTTP ${response.statusCode}`);
  });
}

/** Sends `batch` with `inFlight` requests outstanding at any moment. */
async function send(batch, inFlight) {
  let next = 0;
  const worker = async () => {
    while (next < batch.length) await post(batch[next++]);
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
}

let offset = 0;
function take() {
  offset += WEBHOOKS;
  return lines.slice(offset - WEBHOOKS, offset);
}
// Warm-up: connections opened, statements prepared, JIT warm.
await send(take(), Math.max(...IN_FLIGHT));
const rows = [];
for (const inFlight of IN_FLIGHT) {
  const batch = take();
  proxy.start();
  const started = performance.now();
  await send(batch, inFlight);
  const seconds = (performance.now() - started) / 1000;
  const counts = proxy.stop();
  rows.push({ inFlight, ...counts, rate: batch.length / seconds, n: batch.length });
}
await server.stop();
await receiver?.stop();
agent.destroy();
await proxy.close();
await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
await admin.end();
rmSync(dir, { recursive: true, force: true });

console.log(
  `${WEBHOOKS} signed webhooks per measure, each a fresh delivery; store settings ${JSON.stringify(EXTRA)}; ${receiver ? "one URL effect per succeeded job" : "no effects"}; ${cli}`,
);
console.log("in flight  round trips/webhook  statements/webhook  webhooks/s");
for (const r of rows) {
  console.log(
    [
      String(r.inFlight).padStart(9),
      (r.roundTrips / r.n).toFixed(2).padStart(19),
      (r.statements / r.n).toFixed(2).padStart(18),
      Math.round(r.rate).toLocaleString("en-US").padStart(10),
    ].join("  "),
  );
}
