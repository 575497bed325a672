import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import { FinalityError } from "../core/errors.js";
import { captureContext, inSpanSync, resumeIn, tracingOn } from "../engine/tracing.js";
import type { ReceivedWebhookHeaders } from "../webhooks/schemes/standard-webhooks/node.js";
import { type BodyBudget, createBodyBudget } from "./body-budget.js";
import { problemHeaders, toProblem } from "./problem.js";
import { tooLarge } from "./read-body.js";
import type { Logger } from "./request-log.js";
import type { ServiceMetrics } from "./service-metrics.js";
import {
  type AfterVerify,
  type WebhookAnswer,
  type WebhookIntake,
  webhookAnswerJson,
} from "./webhook-intake.js";
import { continueVerifiedTrace, traceWebhook, WEBHOOK_ROUTE } from "./webhook-tracing.js";

/** Only plain provider names take the fast path; anything odd goes to the router. */
const WEBHOOK_PATH = /^\/webhooks\/([a-z0-9][a-z0-9_-]{0,63})(?:\?|$)/;

export type NodeRequestHandler = (request: IncomingMessage, response: ServerResponse) => boolean;

/**
 * The webhook route on Node without the router: the same intake as the Hono route, fed from
 * node:http directly (body as Buffers, headers without a Headers object, a JSON string out).
 * Measured at about a fifth less CPU per webhook than through Hono's Request/Response adapters, on
 * the route that carries nearly all the traffic. Returns false for anything it does not take.
 * The log line and counters match the app's request log.
 */
export function createNodeWebhookHandler(options: {
  intake: WebhookIntake;
  bodyLimitBytes: number;
  /** Bytes of webhook bodies read at once, all connections together (`server.bodyBytesInFlight`, 64 MiB). */
  bodyBytesInFlight?: number | undefined;
  /** Follow a verified sender's `traceparent` (`telemetry.trustIncomingTraceparent`); else it is ignored. */
  trustTraceparent?: boolean | undefined;
  logger: Logger;
  metrics: ServiceMetrics;
}): NodeRequestHandler {
  const { intake, bodyLimitBytes, logger, metrics } = options;
  const budget = createBodyBudget(options.bodyBytesInFlight ?? DEFAULT_BODY_BYTES_IN_FLIGHT);
  const trustTraceparent = options.trustTraceparent === true;

  // One async function per request rather than a chain of closures: fewer allocations on the
  // route that carries nearly all the traffic. It runs synchronously up to reading the body, so
  // the body's listeners are attached in the same turn as before.
  async function handle(
    request: IncomingMessage,
    response: ServerResponse,
    url: string,
    provider: string,
    log: Record<string, unknown>,
    afterVerify?: AfterVerify,
  ) {
    const started = performance.now();
    const traced = captureContext();
    // What this request's body holds of the budget, given back once it is answered.
    const held = { bytes: 0 };
    try {
      let answer: WebhookAnswer | undefined;
      try {
        answer = await intake.receive(
          provider,
          new NodeWebhookHeaders(request.headers),
          () => readNodeBody(request, bodyLimitBytes, budget, held),
          log,
          afterVerify,
        );
      } catch (error) {
        const { problem, exposed } = toProblem(error);
        if (!exposed) logger.error({ err: error, path: WEBHOOK_ROUTE }, "unexpected error");
        // A refused body may still be arriving: answer, then close the connection rather than
        // read it all. Closing at once would reset the socket before the client reads the answer.
        if (!request.complete) lingerThenClose(request);
        send(response, problem.status, problemHeaders(problem), JSON.stringify(problem));
      }
      if (answer !== undefined) {
        const body = webhookAnswerJson(answer);
        if (tracingOn()) resumeIn(traced, () => inSpanSync("answer", () => sendJson(response, body)));
        else sendJson(response, body);
      }
      const status = response.statusCode;
      metrics.requestFinished(WEBHOOK_ROUTE, "POST", status);
      // The line's own fields lead `log` (requestFields), so it is written as it is, not copied.
      log.path = pathOf(url);
      log.status = status;
      log.ms = Math.round((performance.now() - started) * 100) / 100;
      if (status >= 500) logger.error(log, "request failed");
      else if (status >= 400) logger.warn(log, "request refused");
      else logger.info(log, "request");
    } catch (error) {
      // Nothing above should throw; if it does, it must not become an unhandled rejection.
      logger.error({ err: error, path: WEBHOOK_ROUTE }, "webhook handler failed");
    } finally {
      budget.give(held.bytes);
    }
  }

  return (request, response) => {
    if (request.method !== "POST") return false;
    const url = request.url ?? "";
    const match = WEBHOOK_PATH.exec(url);
    if (match === null) return false;
    const provider = match[1] as string;
    if (tracingOn()) {
      const log = requestFields();
      // A sender's traceparent only when trusted, and then only once its signature is verified.
      const traceParent = trustTraceparent ? single(request.headers.traceparent) : undefined;
      if (traceParent !== undefined) {
        void handle(request, response, url, provider, log, continueVerifiedTrace(provider, traceParent, log));
        return true;
      }
      void traceWebhook(
        provider,
        undefined,
        log,
        () => response.statusCode,
        () => handle(request, response, url, provider, log),
      );
    } else void handle(request, response, url, provider, requestFields());
    return true;
  };
}

/** The request's headers as the verifiers read them; `get` on the prototype, not a closure per request. */
class NodeWebhookHeaders implements ReceivedWebhookHeaders {
  readonly id: string | undefined;
  readonly timestamp: string | undefined;
  readonly signature: string | undefined;
  constructor(private readonly headers: IncomingHttpHeaders) {
    this.id = single(headers["webhook-id"]);
    this.timestamp = single(headers["webhook-timestamp"]);
    this.signature = single(headers["webhook-signature"]);
  }
  get(name: string): string | undefined {
    return single(this.headers[name]);
  }
}

/**
 * The request line's fields in the app's request log order (method, path, route, status, ms),
 * set when the answer is decided; the intake adds its own after them (provider, delivery, job,
 * outcome) as it goes.
 */
function requestFields(): Record<string, unknown> {
  return { method: "POST", path: undefined, route: WEBHOOK_ROUTE, status: undefined, ms: undefined };
}

function pathOf(url: string): string {
  const query = url.indexOf("?");
  return query === -1 ? url : url.slice(0, query);
}

function single(value: IncomingHttpHeaders[string]): string | undefined {
  return Array.isArray(value) ? value.join(", ") : value;
}

function send(response: ServerResponse, status: number, headers: Record<string, string>, body: string): void {
  if (response.headersSent) return;
  response.writeHead(status, { ...headers, "content-length": Buffer.byteLength(body) });
  response.end(body);
}

/** The 200 answer: the same headers as `send` writes, without copying a headers object. */
function sendJson(response: ServerResponse, body: string): void {
  if (response.headersSent) return;
  response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  response.end(body);
}

const DEFAULT_BODY_BYTES_IN_FLIGHT = 64 * 1024 * 1024;

/**
 * The body as bytes, refusing more than the limit as soon as it is passed (chunked or not). The
 * bytes are taken from `budget` before they are held (a declared length at once, else chunk by
 * chunk) and counted in `held`, so that all requests together hold no more than the budget.
 */
function readNodeBody(
  request: IncomingMessage,
  limitBytes: number,
  budget: BodyBudget,
  held: { bytes: number },
): Promise<Uint8Array> {
  const declared = request.headers["content-length"];
  if (declared !== undefined && Number(declared) > limitBytes) return Promise.reject(tooLarge(limitBytes));
  try {
    // The parser never delivers more than the declared length: one reservation covers the body.
    if (declared !== undefined) budget.take(Number(declared));
  } catch (error) {
    return Promise.reject(error);
  }
  if (declared !== undefined) held.bytes = Number(declared);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const stop = (error: FinalityError) => {
      request.off("data", onData);
      request.pause();
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      total += chunk.length;
      if (total > limitBytes) return stop(tooLarge(limitBytes));
      if (declared === undefined) {
        try {
          budget.take(chunk.length);
        } catch (error) {
          return stop(error as FinalityError);
        }
        held.bytes += chunk.length;
      }
      chunks.push(chunk);
    };
    // `on`, not `once`: each event comes at most once per request, a promise settles once, and
    // `once` wraps each listener and removes it as it fires, on every request.
    request.on("data", onData);
    request.on("end", () =>
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total)),
    );
    // A client that goes away mid-body is a bad request, not a server error (and is not logged as one).
    const aborted = () =>
      reject(new FinalityError("invalid-request", "the client closed the connection mid-body"));
    request.on("error", aborted);
    request.on("close", () => {
      if (!request.complete) aborted();
    });
  });
}

const LINGER_IDLE_MS = 500;
const LINGER_MAX_MS = 5_000;
const LINGER_MAX_BYTES = 64 * 1024 * 1024;

/**
 * Discards what is still arriving while the sender keeps sending, then closes: once it pauses
 * for 500 ms, and at most after 5 s or 64 MiB. A socket closed while the sender still writes is
 * reset by the next segment it sends, and a reset throws away the answer still unread in the
 * sender's buffer: a slow sender would see a broken connection (and retry) instead of its 4xx.
 */
function lingerThenClose(request: IncomingMessage): void {
  let discarded = 0;
  const close = () => {
    clearTimeout(idle);
    clearTimeout(cap);
    request.off("data", onData);
    request.socket.destroySoon();
  };
  const onData = (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > LINGER_MAX_BYTES) close();
    else idle.refresh();
  };
  const idle = setTimeout(close, LINGER_IDLE_MS);
  const cap = setTimeout(close, LINGER_MAX_MS);
  idle.unref();
  cap.unref();
  request.on("data", onData);
  request.once("end", () => {
    clearTimeout(idle);
    clearTimeout(cap);
  });
  request.resume();
}
