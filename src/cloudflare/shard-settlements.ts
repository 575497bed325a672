import * as z from "zod";
import { FinalityError } from "../core/errors.js";
import { parseWith } from "../core/validation.js";
import { problemResponse, toProblem } from "../http/problem.js";
import { settlementListQuerySchema, settlementStreamQuerySchema } from "../http/settlement-routes.js";
import { settlementNumber } from "../store/settlement-feed.js";
import {
  decodeMergedCursor,
  encodeMergedCursor,
  type ShardPositions,
  shardCursorAt,
} from "./merged-settlement-cursor.js";
import type { SendToShard } from "./shard-lists.js";

/**
 * The settlement feed of a sharded Worker (`GET /v1/settlements`, `GET /v1/settlements/stream`),
 * merged over every ledger object with one cursor that holds each object's last settlement
 * number (merged-settlement-cursor.ts). Each object's feed is in its own commit order, and the
 * merge only ever takes a prefix of what each object answered, in that order, so a consumer that
 * resumes from any cursor it was given sees every settlement once: none skipped, none repeated.
 * Between objects there is no common order; a page interleaves by settled time, then by shard.
 */

/** The Worker's cursor is longer than one shard's (it holds one number per shard). */
const MERGED_AFTER = z.string().min(1).max(4096).optional();
const listQuery = settlementListQuerySchema.extend({ after: MERGED_AFTER });
const streamQuery = settlementStreamQuerySchema.extend({ after: MERGED_AFTER });

/** What a shard's page holds, as far as the merge reads it. */
interface ShardItem {
  cursor: string;
  settledAt: string;
  [field: string]: unknown;
}

interface Filter {
  provider?: string | undefined;
  kind?: string | undefined;
}

function shardRequest(
  origin: string,
  path: string,
  params: Record<string, string | undefined>,
  from: Request,
  signal?: AbortSignal,
): Request {
  const url = new URL(path, origin);
  for (const [name, value] of Object.entries(params))
    if (value !== undefined) url.searchParams.set(name, value);
  // Only the token goes on: the client's Last-Event-ID is a merged cursor, not the shard's.
  const headers = new Headers();
  const token = from.headers.get("authorization");
  if (token !== null) headers.set("authorization", token);
  return new Request(url, { method: "GET", headers, ...(signal ? { signal } : {}) });
}

/** A shard's refusal of the query is the same from every shard: the first one is passed on. */
function refusalOf(name: string, response: Response): Response {
  if (response.status < 500) return response;
  return problemResponse(
    toProblem(
      new FinalityError("store-unavailable", `ledger shard ${name} did not answer the settlement feed`, {
        retryAfterMs: 1_000,
      }),
    ).problem,
  );
}

/**
 * One merged page: every shard's next `limit` settlements after its position, at once, merged
 * by (settledAt, shard order) up to `limit`. Each item's `cursor` is the merged cursor right
 * after it; the page's `cursor` is the last item's, or the one passed in.
 */
async function readMergedPage(
  request: Request,
  shards: readonly string[],
  send: SendToShard,
  after: string | undefined,
  positions: ShardPositions,
  query: Filter & { limit?: number | undefined },
): Promise<Response> {
  const origin = new URL(request.url).origin;
  const limit = query.limit ?? 100;
  const answers = await Promise.all(
    shards.map(async (name) => {
      const response = await send(
        name,
        shardRequest(
          origin,
          "/v1/settlements",
          {
            after: shardCursorAt(positions.get(name) ?? 0),
            limit: String(limit),
            provider: query.provider,
            kind: query.kind,
          },
          request,
        ),
      );
      return { name, response };
    }),
  );
  const refused = answers.find((a) => a.response.status !== 200);
  if (refused !== undefined) {
    for (const a of answers) if (a !== refused) await a.response.body?.cancel();
    return refusalOf(refused.name, refused.response);
  }
  const pages = await Promise.all(
    answers.map(async (a) => ((await a.response.json()) as { items: ShardItem[] }).items),
  );
  const next = new Map(positions);
  const taken = shards.map(() => 0);
  const items: ShardItem[] = [];
  while (items.length < limit) {
    let best = -1;
    for (let s = 0; s < shards.length; s++) {
      const head = pages[s]?.[taken[s] as number];
      if (head === undefined) continue;
      const bestHead = best < 0 ? undefined : pages[best]?.[taken[best] as number];
      // Ties go to the earlier shard: the loop only replaces on a strictly earlier time.
      if (bestHead === undefined || head.settledAt < bestHead.settledAt) best = s;
    }
    if (best < 0) break;
    const item = pages[best]?.[taken[best] as number] as ShardItem;
    taken[best] = (taken[best] as number) + 1;
    next.set(shards[best] as string, positionOf(item, shards[best] as string, next));
    items.push({ ...item, cursor: encodeMergedCursor(next) });
  }
  return Response.json({ items, cursor: items.at(-1)?.cursor ?? after ?? null });
}

/** The shard's own settlement number of `item`, which must be past where the shard was. */
function positionOf(item: ShardItem, shard: string, positions: ShardPositions): number {
  const n = settlementNumber(item.cursor);
  if (n <= (positions.get(shard) ?? 0))
    throw new FinalityError("store-unavailable", `ledger shard ${shard} answered a settlement out of order`);
  return n;
}

/**
 * `GET /v1/settlements` over every shard. With `wait`, every shard is long-polled at once (one
 * subrequest each) and the first that has something ends the wait for all; then one merged read
 * answers, so a long poll costs at most two subrequests per shard.
 */
export async function mergedSettlements(
  request: Request,
  shards: readonly string[],
  send: SendToShard,
): Promise<Response> {
  let query: z.output<typeof listQuery>;
  let positions: ShardPositions;
  try {
    query = parseWith(listQuery, Object.fromEntries(new URL(request.url).searchParams), "invalid-request");
    positions = decodeMergedCursor(query.after, "after");
  } catch (error) {
    return problemResponse(toProblem(error).problem);
  }
  const { wait, after, ...filter } = query;
  if (wait !== undefined && wait > 0) {
    const refused = await waitForAnyShard(request, shards, send, positions, filter, wait);
    if (refused !== null) return refused;
  }
  return readMergedPage(request, shards, send, after, positions, filter);
}

/** Long-polls every shard from its position; resolves when one has news, all time out, or one refuses. */
async function waitForAnyShard(
  request: Request,
  shards: readonly string[],
  send: SendToShard,
  positions: ShardPositions,
  filter: Filter,
  wait: number,
): Promise<Response | null> {
  const origin = new URL(request.url).origin;
  const stop = new AbortController();
  const onClientGone = () => stop.abort();
  request.signal?.addEventListener("abort", onClientGone, { once: true });
  try {
    return await new Promise<Response | null>((resolve) => {
      let pending = shards.length;
      const done = () => {
        if (--pending === 0) resolve(null);
      };
      stop.signal.addEventListener("abort", () => resolve(null), { once: true });
      for (const name of shards)
        void (async () => {
          try {
            const params = {
              after: shardCursorAt(positions.get(name) ?? 0),
              limit: "1",
              wait: String(wait),
              provider: filter.provider,
              kind: filter.kind,
            };
            const response = await send(
              name,
              shardRequest(origin, "/v1/settlements", params, request, stop.signal),
            );
            if (response.status !== 200) {
              // Read now: its body goes with the subrequest, which the `finally` below aborts.
              const refusal = new Response(await response.arrayBuffer(), response);
              return resolve(refusalOf(name, refusal));
            }
            const page = (await response.json()) as { items: unknown[] };
            if (page.items.length > 0) resolve(null);
          } catch {
            // Aborted, or the shard failed: the merged read that follows reports a failed shard.
          } finally {
            done();
          }
        })();
    });
  } finally {
    request.signal?.removeEventListener("abort", onClientGone);
    stop.abort();
  }
}

/** One Server-Sent Event of a shard's stream. */
interface ShardEvent {
  event: string | null;
  data: string;
}

/** Splits a shard's SSE body into events (comments, such as its heartbeats, are dropped). */
async function* shardEvents(reader: ReadableStreamDefaultReader<Uint8Array>): AsyncGenerator<ShardEvent> {
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let event: string | null = null;
        const data: string[] = [];
        for (const line of block.split("\n")) {
          if (line.startsWith("event:")) event = line.slice(6).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
        }
        if (data.length > 0) yield { event, data: data.join("\n") };
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** Encoded events the merged stream queues for a client that has not taken them yet (64 KiB). */
const MERGED_QUEUE_BYTES = 64 * 1024;

interface MergedStreamOptions {
  /** How often an idle stream sends a comment, so that proxies keep it open (15 s). */
  heartbeatMs?: number;
}

/**
 * `GET /v1/settlements/stream` over every shard: one SSE stream from each shard (one subrequest
 * each, for the stream's whole life), each opened at that shard's position. Every settlement is
 * sent on as it arrives, with `id:` (and its `cursor`) the merged cursor right after it, so a
 * client that reconnects with Last-Event-ID resumes every shard exactly where it was. Between
 * shards, events are in the order they reach the Worker. When any shard's stream ends (its
 * object restarted, say), the merged stream ends too and the client reconnects from its last id.
 */
export async function mergedSettlementStream(
  request: Request,
  shards: readonly string[],
  send: SendToShard,
  options: MergedStreamOptions = {},
): Promise<Response> {
  let filter: z.output<typeof streamQuery>;
  let positions: ShardPositions;
  try {
    filter = parseWith(streamQuery, Object.fromEntries(new URL(request.url).searchParams), "invalid-request");
    const lastEventId = request.headers.get("last-event-id");
    positions =
      lastEventId === null || lastEventId === ""
        ? decodeMergedCursor(filter.after, "after")
        : decodeMergedCursor(lastEventId, "Last-Event-ID");
  } catch (error) {
    return problemResponse(toProblem(error).problem);
  }
  const origin = new URL(request.url).origin;
  const opened = await Promise.all(
    shards.map(async (name) => {
      const params = {
        after: shardCursorAt(positions.get(name) ?? 0),
        provider: filter.provider,
        kind: filter.kind,
      };
      return {
        name,
        response: await send(name, shardRequest(origin, "/v1/settlements/stream", params, request)),
      };
    }),
  );
  const refused = opened.find((o) => o.response.status !== 200 || o.response.body === null);
  if (refused !== undefined) {
    for (const o of opened) if (o !== refused) await o.response.body?.cancel();
    return refusalOf(refused.name, refused.response);
  }
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const encoder = new TextEncoder();
  const readers = opened.map((o) => (o.response.body as ReadableStream<Uint8Array>).getReader());
  const sources = readers.map(shardEvents);
  let ended = false;
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  // Pumps waiting for the client to make room (see `pull`).
  let waitingForRoom: (() => void)[] = [];
  // Cancelling a reader ends its pending read, so every pump returns and every shard stream closes.
  const endAll = () => {
    ended = true;
    clearInterval(heartbeat);
    for (const wake of waitingForRoom.splice(0)) wake();
    for (const reader of readers) void reader.cancel().catch(() => {});
  };
  // Pulled, like each shard's own stream: a shard's next event is read only once the client has
  // taken what is queued, so a client that stops reading stops the reads (and the shards' reads
  // behind them) instead of the Worker holding the whole backlog.
  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        const write = (text: string) => {
          if (!ended) controller.enqueue(encoder.encode(text));
        };
        const room = () =>
          ended || (controller.desiredSize ?? 0) > 0
            ? Promise.resolve()
            : new Promise<void>((resolve) => waitingForRoom.push(resolve));
        write(`retry: 2000\n: settlements over ${shards.length} shards\n\n`);
        heartbeat = setInterval(() => {
          if ((controller.desiredSize ?? 0) > 0) write(": heartbeat\n\n");
        }, heartbeatMs);
        const pumps = sources.map(async (source, s) => {
          const name = shards[s] as string;
          for (;;) {
            await room();
            if (ended) return;
            const next = await source.next();
            if (next.done || ended) return;
            const event = next.value;
            if (event.event !== "settlement") continue;
            const item = JSON.parse(event.data) as ShardItem;
            positions.set(name, positionOf(item, name, positions));
            const cursor = encodeMergedCursor(positions);
            write(`id: ${cursor}\nevent: settlement\ndata: ${JSON.stringify({ ...item, cursor })}\n\n`);
          }
        });
        // The first shard stream to end (or fail) ends the merged one: the client resumes from its last id.
        void Promise.race(pumps.map((p) => p.catch(() => {}))).then(() => {
          if (ended) return;
          write(": stream ended\n\n");
          endAll();
          try {
            controller.close();
          } catch {
            // already closed
          }
        });
      },
      pull() {
        const woken = waitingForRoom;
        waitingForRoom = [];
        for (const wake of woken) wake();
      },
      cancel() {
        endAll();
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: MERGED_QUEUE_BYTES }),
  );
  return new Response(body, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      "x-accel-buffering": "no",
    },
  });
}
