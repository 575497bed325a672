import type { Hono } from "hono";
import * as z from "zod";
import { FinalityError, isFinalityError } from "../core/errors.js";
import { LIMITS, parseWith } from "../core/validation.js";
import type { Finality } from "../engine/finality.js";
import { engineOf } from "../engine/finality-engine.js";
import { followSettlements, readSettlementsWaiting, settlementToJson } from "../engine/settlement-stream.js";
import {
  MAX_SETTLEMENT_LIMIT,
  type Settlement,
  type SettlementPage,
  settlementNumber,
} from "../store/settlement-feed.js";
import type { AppEnv } from "./app-env.js";
import { eitherAborts } from "./either-aborts.js";

/** Longest long poll a client may ask for, in seconds. */
export const MAX_WAIT_SECONDS = 60;

const whole = (max: number) =>
  z
    .string()
    .regex(/^[0-9]+$/, "must be a whole number")
    .transform(Number)
    .pipe(z.number().int().min(0).max(max));

const filterShape = {
  after: z.string().min(1).max(200).optional(),
  provider: z.string().min(1).max(LIMITS.providerNameLength).optional(),
  kind: z.string().min(1).max(LIMITS.kindLength).optional(),
};
export const settlementListQuerySchema = z.strictObject({
  ...filterShape,
  limit: whole(MAX_SETTLEMENT_LIMIT).pipe(z.number().min(1)).optional(),
  wait: whole(MAX_WAIT_SECONDS).optional(),
});
export const settlementStreamQuerySchema = z.strictObject(filterShape);

interface SettlementRouteOptions {
  finality: Finality;
  /** How often an idle SSE stream sends a comment, so that proxies keep it open (15 s). */
  heartbeatMs?: number | undefined;
  /** Aborted when the server stops: long polls answer at once and streams end (clients reconnect elsewhere). */
  shutdown?: AbortSignal | undefined;
}

/**
 * The settlement feed over HTTP: `GET /v1/settlements` (a page, or a long poll with `wait`) and
 * `GET /v1/settlements/stream` (Server-Sent Events, `id:` = cursor, resumable by Last-Event-ID).
 */
export function addSettlementRoutes(app: Hono<AppEnv>, options: SettlementRouteOptions): void {
  const { store } = engineOf(options.finality);
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const shutdown = options.shutdown;

  app.get("/v1/settlements", async (c) => {
    c.set("route", "/v1/settlements");
    const { wait, ...query } = parseWith(settlementListQuerySchema, c.req.query(), "invalid-request");
    if (wait === undefined || wait === 0) return c.json(pageToJson(await store.readSettlements(query)));
    // Aborted after the answer too, so that no listener stays behind on the shutdown signal.
    const until = eitherAborts(c.req.raw.signal, shutdown);
    try {
      return c.json(pageToJson(await readSettlementsWaiting(store, query, wait * 1000, until.signal)));
    } finally {
      until.abort();
    }
  });

  app.get("/v1/settlements/stream", async (c) => {
    c.set("route", "/v1/settlements/stream");
    const query = parseWith(settlementStreamQuerySchema, c.req.query(), "invalid-request");
    const lastEventId = c.req.header("last-event-id");
    const after = lastEventId === undefined || lastEventId === "" ? query.after : lastEventId;
    checkCursor(after, lastEventId === undefined || lastEventId === "" ? "after" : "Last-Event-ID");
    const stop = eitherAborts(c.req.raw.signal, shutdown);
    const body = settlementEventStream(
      followSettlements(store, { ...query, after, signal: stop.signal, batch: STREAM_BATCH }),
      { after, heartbeatMs, stop },
    );
    return new Response(body, {
      headers: {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache, no-transform",
        "x-accel-buffering": "no",
      },
    });
  });
}

/** Settlements a stream reads from the store at once: what one stream holds besides its queue. */
const STREAM_BATCH = 16;
/** Encoded events a stream queues for a client that has not taken them yet (64 KiB). */
const STREAM_QUEUE_BYTES = 64 * 1024;

/**
 * The SSE body, pulled: the next settlement is read from the feed only when the client has taken
 * what was queued (the queue holds STREAM_QUEUE_BYTES, and the Node server writes a chunk only
 * once the socket drained). A client that stops reading therefore stops the reads: one stream
 * holds at most one batch of the feed and one queue, whatever the backlog behind its cursor.
 */
function settlementEventStream(
  settlements: AsyncGenerator<Settlement, void, undefined>,
  options: { after: string | undefined; heartbeatMs: number; stop: AbortController },
): ReadableStream<Uint8Array> {
  const { stop } = options;
  const encoder = new TextEncoder();
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let ended = false;
  const end = () => {
    ended = true;
    clearInterval(heartbeat);
    stop.abort();
  };
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        // Written at once: the client (and any proxy) sees the stream open before the first event.
        controller.enqueue(
          encoder.encode(`retry: 2000\n: settlements after ${options.after ?? "the start"}\n\n`),
        );
        // Only into room the client has made: a client that reads nothing needs no keep-alive.
        heartbeat = setInterval(() => {
          if (!ended && (controller.desiredSize ?? 0) > 0)
            controller.enqueue(encoder.encode(": heartbeat\n\n"));
        }, options.heartbeatMs);
      },
      async pull(controller) {
        let next: IteratorResult<Settlement, void>;
        try {
          next = await settlements.next();
        } catch {
          // The store failed (closed, unreachable): end the stream; the client reconnects with its last id.
          next = { done: true, value: undefined };
          if (!ended) controller.enqueue(encoder.encode(": stream ended\n\n"));
        }
        // Cancelled meanwhile (the client left): the stream is closed already.
        if (ended) return;
        if (next.done) {
          end();
          closeQuietly(controller);
          return;
        }
        const settlement = next.value;
        controller.enqueue(
          encoder.encode(
            `id: ${settlement.cursor}\nevent: settlement\ndata: ${JSON.stringify(settlementToJson(settlement))}\n\n`,
          ),
        );
      },
      cancel() {
        end();
        // Ends the feed's wait (the abort above) and lets its page go.
        void settlements.return(undefined).catch(() => {});
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: STREAM_QUEUE_BYTES }),
  );
}

/** A bad cursor is a 400 before the stream starts, named by where it came from. */
function checkCursor(cursor: string | undefined, field: "after" | "Last-Event-ID"): void {
  try {
    settlementNumber(cursor);
  } catch (error) {
    if (!isFinalityError(error, "invalid-request")) throw error;
    throw new FinalityError("invalid-request", `${field}: not a settlement cursor this server gave`, {
      details: { field },
    });
  }
}

const pageToJson = (page: SettlementPage) => ({
  items: page.items.map(settlementToJson),
  cursor: page.cursor,
});

/** Closes a stream whose client may have gone meanwhile (closing an errored stream throws). */
function closeQuietly(controller: ReadableStreamDefaultController<Uint8Array>): void {
  try {
    controller.close();
  } catch {
    // already closed or errored: nothing to end
  }
}
