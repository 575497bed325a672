/**
 * Signed webhooks per second through the Cloudflare Workers entry running in workerd (Miniflare,
 * on this machine): the Worker forwards each one to the ledger Durable Object, which verifies it
 * with WebCrypto and commits it to the object's SQLite before answering. Beside it, the baseline:
 * the same webhooks through the same Hono app on Node (@hono/node-server, node:crypto, a SQLite
 * file), each side reached over loopback HTTP by the same fetch client. The ratio is Worker / Node.
 * This measures the local runtime (Miniflare adds its own routing worker in front), not
 * Cloudflare's network.
 *
 * Knobs: BENCH_WORKER_WEBHOOKS (default 3000), BENCH_WORKER_CONCURRENCY (default 16).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { serve } from "@hono/node-server";
import { build } from "esbuild";
import { Miniflare } from "miniflare";
import { createApp } from "../dist/app/create-app.js";
import { parseConfig } from "../dist/config/load-config.js";
import { createFinality } from "../dist/engine/create-finality.js";
import { ledgerOptionsFromConfig } from "../dist/host/from-config.js";
import { createWebhookReceivers } from "../dist/providers/node-providers.js";
import { signStandardWebhook } from "../dist/webhooks/schemes/standard-webhooks/node.js";
import { fmt } from "./lib/stats.js";

const COUNT = Number(process.env.BENCH_WORKER_WEBHOOKS ?? 3000);
const CONCURRENCY = Number(process.env.BENCH_WORKER_CONCURRENCY ?? 16);
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const CONFIG = {
  providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } },
  log: { level: "warn" },
};
console.log(`webhooks: ${COUNT} per side, ${CONCURRENCY} in flight`);

function webhooks(prefix) {
  const now = Math.floor(Date.now() / 1000);
  return Array.from({ length: COUNT }, (_, i) => {
    const body = JSON.stringify({ jobId: `${prefix}-${i}`, state: "succeeded", result: { n: i } });
    const headers = signStandardWebhook({
      id: `${prefix}-msg-${i}`,
      timestampSeconds: now,
      body,
      secret: SECRET,
    });
    return { body, headers: { ...headers, "content-type": "application/json" } };
  });
}

async function rate(send, requests) {
  let next = 0;
  let failures = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < requests.length) {
        const { body, headers } = requests[next++];
        const response = await send("https://finality.example/webhooks/acme", {
          method: "POST",
          headers,
          body,
        });
        await response.arrayBuffer();
        if (response.status !== 200) failures++;
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (failures > 0) throw new Error(`${failures} webhooks were not answered 200`);
  return requests.length / seconds;
}

async function onNode(round) {
  const dir = mkdtempSync(join(tmpdir(), "finality-bench-workers-"));
  const config = parseConfig(CONFIG, {}, { db: join(dir, "ledger.db") });
  const finality = createFinality({
    store: { sqlite: config.store.sqlite },
    ...ledgerOptionsFromConfig(config),
  });
  const app = createApp({
    finality,
    config,
    receivers: createWebhookReceivers(config.providers, () => Date.now()),
  });
  const server = await new Promise((resolve) => {
    const started = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, () => resolve(started));
  });
  const base = `http://127.0.0.1:${server.address().port}`;
  try {
    const local = (url) => url.replace("https://finality.example", base);
    return await rate((url, init) => fetch(local(url), init), webhooks(`node-${round}`));
  } finally {
    await new Promise((resolve) => server.close(resolve));
    await finality.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const script = (
  await build({
    entryPoints: [fileURLToPath(new URL("../dist/cloudflare/index.js", import.meta.url))],
    bundle: true,
    write: false,
    format: "esm",
    platform: "browser",
    conditions: ["workerd", "worker", "browser"],
    logLevel: "silent",
  })
).outputFiles[0].text;

async function onWorker(round) {
  const mf = new Miniflare({
    modules: true,
    script,
    compatibilityDate: "2025-09-01",
    bindings: { FINALITY_CONFIG: JSON.stringify(CONFIG) },
    durableObjects: { FINALITY_LEDGER: { className: "FinalityLedger", useSQLite: true } },
  });
  try {
    await (await mf.dispatchFetch("https://finality.example/healthz")).arrayBuffer();
    return await rate((url, init) => mf.dispatchFetch(url, init), webhooks(`worker-${round}`));
  } finally {
    await mf.dispose();
  }
}

const results = [];
for (let round = 1; round <= 2; round++) {
  const node = await onNode(round);
  const worker = await onWorker(round);
  results.push({ node, worker });
  console.log(`round ${round}: Node ${fmt(node, 0)} webhooks/s, Worker ${fmt(worker, 0)} webhooks/s`);
}
const best = (side) => Math.max(...results.map((r) => r[side]));
console.log(
  `\nWorker (workerd, Durable Object SQLite, WebCrypto) ${fmt(best("worker"), 0)} webhooks/s vs Node app ${fmt(best("node"), 0)} webhooks/s: ratio ${fmt(best("worker") / best("node"), 2)}×`,
);
