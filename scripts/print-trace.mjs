#!/usr/bin/env node
// Prints the span tree of one completion, for docs/telemetry.md: `finality serve` (from dist/,
// run `npm run build` first) in this process with an in-memory span exporter, one signed webhook
// that settles a job, and a loopback receiver for its effect that refuses the first attempt.
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace";
import { Webhook } from "standardwebhooks";
import { serve } from "../dist/host/node/serve.js";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const statuses = [503];
let received;
const delivered = new Promise((resolve) => {
  received = resolve;
});
const receiver = createServer((request, response) => {
  request.resume();
  request.on("end", () => {
    const status = statuses.shift() ?? 200;
    console.log(`receiver: ${status} traceparent=${request.headers.traceparent}`);
    response.writeHead(status).end();
    if (status === 200) received();
  });
}).listen(0, "127.0.0.1");
await once(receiver, "listening");

const dir = mkdtempSync(join(tmpdir(), "finality-trace-"));
const file = join(dir, "finality.json");
writeFileSync(
  file,
  JSON.stringify({
    server: { port: 0 },
    store: { sqlite: join(dir, "ledger.db") },
    providers: { openai: { type: "generic", webhook: { secrets: [SECRET] } } },
    effects: [
      { name: "notify", url: `http://127.0.0.1:${receiver.address().port}/hooks/done`, secret: SECRET },
    ],
    effectDelivery: { retrySeconds: [0.2], pollIntervalSeconds: 0.1 },
    log: { level: "error" },
  }),
);
// Kept here: the exporter forgets its spans when the service stops (and shuts it down).
const spans = [];
const exporter = new (class extends InMemorySpanExporter {
  export(batch, done) {
    spans.push(...batch);
    super.export(batch, done);
  }
})();
const service = await serve({ configFile: file, flags: {}, env: {}, spanExporter: exporter });
const body = JSON.stringify({
  jobId: "resp_8f2c",
  state: "succeeded",
  updateTime: new Date(Date.now() - 4200).toISOString(),
});
const id = "msg_2Yh4";
const at = new Date();
const headers = {
  "content-type": "application/json",
  "webhook-id": id,
  "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
  "webhook-signature": new Webhook(SECRET).sign(id, at, body),
};
const answer = await fetch(`${service.url}/webhooks/openai`, { method: "POST", headers, body });
console.log(`webhook: ${answer.status} ${await answer.text()}`);
await delivered;
await service.stop();
receiver.close();
rmSync(dir, { recursive: true, force: true });

const start = Math.min(...spans.map((s) => s.startTime[0] * 1e3 + s.startTime[1] / 1e6));
const ms = (t) => t[0] * 1e3 + t[1] / 1e6;
const children = new Map();
for (const span of spans) {
  const parent = span.parentSpanContext?.spanId ?? "";
  children.set(parent, [...(children.get(parent) ?? []), span]);
}
const shown = (attributes) =>
  Object.entries(attributes)
    .filter(([key]) => !key.startsWith("messaging.system") && key !== "finality.provider")
    .map(([key, value]) => `${key}=${value}`)
    .join(" ");
function print(span, depth) {
  const offset = (ms(span.startTime) - start).toFixed(1).padStart(7);
  const took = (ms(span.endTime) - ms(span.startTime)).toFixed(1);
  const link = span.links.length ? `  (link → ${span.links.map((l) => l.context.spanId).join(", ")})` : "";
  console.log(
    `${offset} ms ${"  ".repeat(depth)}${span.name} [${span.spanContext().spanId}] ${took} ms${link}`,
  );
  const attrs = shown(span.attributes);
  if (attrs) console.log(`${" ".repeat(11)}${"  ".repeat(depth)}  ${attrs}`);
  for (const child of (children.get(span.spanContext().spanId) ?? []).sort(
    (a, b) => ms(a.startTime) - ms(b.startTime),
  ))
    print(child, depth + 1);
}
console.log(`\ntrace ${spans[0]?.spanContext().traceId}: ${spans.length} spans`);
for (const root of children.get("") ?? []) print(root, 0);
