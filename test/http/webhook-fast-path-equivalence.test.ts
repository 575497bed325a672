import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app/create-app.js";
import { parseConfig } from "../../src/config/load-config.js";
import type { Finality } from "../../src/engine/finality.js";
import { finalityFromConfig } from "../../src/host/node/finality-from-config.js";
import { type NodeServer, startNodeServer } from "../../src/http/node-server.js";
import { createNodeWebhookHandler, type NodeRequestHandler } from "../../src/http/node-webhook-handler.js";
import { createPromMetrics } from "../../src/http/prom-metrics.js";
import type { Logger } from "../../src/http/request-log.js";
import { createWebhookIntake } from "../../src/http/webhook-intake.js";
import { createWebhookReceivers } from "../../src/providers/node-providers.js";
import { OTHER_SECRET, SECRET, signWith } from "./helpers/webhooks.js";

// `finality serve` answers webhooks through a fast path that skips the router
// (http/node-webhook-handler.ts); anything it does not take goes to the Hono app. The two must be
// indistinguishable to a sender: the same requests, sent over real HTTP to a server with the fast
// path and to one without it, get the same status, headers and body.

const BODY_LIMIT = 2048;

interface Sent {
  name: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** Sent as chunks without a Content-Length. */
  chunked?: boolean;
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** Headers that say how the connection was handled, not what was answered. */
const CONNECTION_HEADERS = new Set(["date", "connection", "keep-alive"]);

function send(base: string, sent: Sent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${sent.path}`, { method: sent.method, headers: sent.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString();
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // Not JSON: compared as text.
        }
        resolve({ status: res.statusCode ?? 0, headers: answerHeaders(res.headers), body });
      });
      res.on("error", reject);
    });
    // A server may answer a refused body early and close: that is an answer, not a failure.
    req.on("error", reject);
    if (sent.body === undefined) return void req.end();
    if (!sent.chunked) return void req.end(sent.body);
    const half = Math.ceil(sent.body.length / 2);
    req.write(sent.body.slice(0, half));
    req.end(sent.body.slice(half));
  });
}

function answerHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    if (!CONNECTION_HEADERS.has(name) && value !== undefined) out[name] = String(value);
  return out;
}

/** A signed webhook request, built once so that both servers get the very same bytes. */
function signed(
  name: string,
  body: string,
  options: { id?: string; secret?: string; path?: string } = {},
): Sent {
  return {
    name,
    method: "POST",
    path: options.path ?? "/webhooks/acme",
    headers: signWith(options.secret ?? SECRET, body, options.id ? { id: options.id } : {}),
    body,
  };
}

const valid = JSON.stringify({ jobId: "j1", state: "succeeded", seq: 2 });
const big = JSON.stringify({ jobId: "j2", state: "succeeded", result: "x".repeat(BODY_LIMIT) });
const tooOld = JSON.stringify({ jobId: "j3", state: "running" });

const REQUESTS: Sent[] = [
  signed("valid", valid, { id: "msg-valid" }),
  signed("duplicate delivery id", valid, { id: "msg-valid" }),
  signed("same state, new delivery", valid, { id: "msg-valid-again" }),
  signed("older event (stale)", JSON.stringify({ jobId: "j1", state: "running", seq: 1 })),
  signed("bad signature", JSON.stringify({ jobId: "j4", state: "succeeded" }), { secret: OTHER_SECRET }),
  {
    name: "unsigned",
    method: "POST",
    path: "/webhooks/acme",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jobId: "j5", state: "succeeded" }),
  },
  {
    name: "timestamp outside the tolerance",
    method: "POST",
    path: "/webhooks/acme",
    headers: signWith(SECRET, tooOld, { timestampSeconds: Math.floor(Date.now() / 1000) - 86_400 }),
    body: tooOld,
  },
  signed("oversized, with Content-Length", big),
  { ...signed("oversized, chunked", big), chunked: true },
  signed("malformed JSON", "{not json"),
  signed("empty body", ""),
  signed("JSON that is not an observation", JSON.stringify({ jobId: "j6", state: "bogus-state" })),
  signed("JSON array", "[1,2,3]"),
  signed("unknown provider", valid, { path: "/webhooks/nope" }),
  signed("provider name the fast path does not take", valid, { path: "/webhooks/ACME" }),
  signed("query string", JSON.stringify({ jobId: "j7", state: "succeeded" }), {
    path: "/webhooks/acme?via=retry",
  }),
  { name: "wrong method", method: "GET", path: "/webhooks/acme", headers: {} },
  {
    name: "PUT",
    method: "PUT",
    path: "/webhooks/acme",
    headers: { "content-type": "application/json" },
    body: valid,
  },
];

interface Side {
  server: NodeServer;
  finality: Finality;
  /** The request log lines, without their durations. */
  logged: { level: string; message: string | undefined; fields: Record<string, unknown> }[];
}

async function serveSide(withFastPath: boolean, taken: { count: number }): Promise<Side> {
  const config = parseConfig(
    {
      providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } },
      server: { bodyLimitBytes: BODY_LIMIT },
    },
    {},
    { db: ":memory:" },
  );
  const finality = await finalityFromConfig(config);
  const metrics = createPromMetrics({
    stats: () => finality.store.stats(finality.clock.now()),
    processMetrics: false,
  });
  const receivers = createWebhookReceivers(config.providers, () => finality.clock.now());
  const intake = createWebhookIntake({ finality, receivers, metrics });
  const logged: Side["logged"] = [];
  const line = (level: string) => (fields: object, message?: string) => {
    const { ms: _ms, ...rest } = fields as Record<string, unknown>;
    logged.push({ level, message, fields: rest });
  };
  const logger: Logger = { info: line("info"), warn: line("warn"), error: line("error") };
  const app = createApp({ finality, config, metrics, logger, intake });
  let fastPath: NodeRequestHandler | undefined;
  if (withFastPath) {
    const handler = createNodeWebhookHandler({
      intake,
      bodyLimitBytes: BODY_LIMIT,
      logger,
      metrics,
    });
    fastPath = (req, res) => {
      const took = handler(req, res);
      if (took) taken.count++;
      return took;
    };
  }
  const server = await startNodeServer(app, {
    host: "127.0.0.1",
    port: 0,
    ...(fastPath ? { fastPath } : {}),
  });
  return { server, finality, logged };
}

describe("the Node webhook fast path and the Hono route", () => {
  const taken = { count: 0 };
  let fast: Side;
  let routed: Side;
  beforeAll(async () => {
    fast = await serveSide(true, taken);
    routed = await serveSide(false, taken);
  });
  afterAll(async () => {
    for (const side of [fast, routed]) {
      await side.server.close();
      await side.finality.close();
    }
  });

  it("answer every request of the table the same way (status, headers, body)", async () => {
    const differences: { name: string; fast: Answer; routed: Answer }[] = [];
    const statuses: Record<string, number> = {};
    for (const sent of REQUESTS) {
      // In the same order on both sides: a duplicate is a duplicate on each.
      const viaFast = await send(fast.server.url, sent);
      const viaRouter = await send(routed.server.url, sent);
      statuses[sent.name] = viaFast.status;
      if (JSON.stringify(viaFast) !== JSON.stringify(viaRouter))
        differences.push({ name: sent.name, fast: viaFast, routed: viaRouter });
    }
    expect(differences).toEqual([]);
    // The request log says the same too (route, status, outcome, provider, ...).
    expect(fast.logged).toEqual(routed.logged);
    expect(fast.logged).toHaveLength(REQUESTS.length);
    // The table covers what it says it does (and the fast path really took the POSTs it takes).
    expect(statuses).toMatchObject({
      valid: 200,
      "duplicate delivery id": 200,
      "bad signature": 401,
      unsigned: 401,
      "oversized, with Content-Length": 413,
      "oversized, chunked": 413,
      "malformed JSON": 400,
      "unknown provider": 404,
      "wrong method": 405,
    });
    expect(taken.count).toBeGreaterThanOrEqual(REQUESTS.filter((r) => r.method === "POST").length - 1);
  });
});
