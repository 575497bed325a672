import { FinalityError } from "../core/errors.js";
import { problemResponse, toProblem } from "../http/problem.js";
import { SHARD_HEADERS } from "./shard-fence.js";

/** Sends one request to the named ledger object (with the Worker's shard headers). */
export type SendToShard = (name: string, request: Request) => Promise<Response>;

interface ShardPage {
  items: Record<string, unknown>[];
  nextCursor: string | null;
  itemCursors: (string | null)[];
}

/** Per shard: "" for not started, a shard cursor, or null once it has nothing more. */
export type CombinedCursor = Record<string, string | null>;

/** Newest first, by the time each list is ordered by within a shard (insertion order there). */
const MERGE_KEY: Record<string, string> = {
  "/v1/jobs": "submittedAt",
  "/v1/effects": "createdAt",
  "/v1/parked": "parkedAt",
};

/**
 * A list over every shard, paged with one opaque cursor that holds each shard's own. A page takes
 * up to `limit` items from each shard's next page and merges them newest first, taking a prefix of
 * each shard's sequence; the cursor then resumes each shard right after what it took. So paging
 * never skips or repeats an item, whatever the order between shards (which is only approximately
 * by time: two objects have no common sequence).
 */
export async function mergedList(
  request: Request,
  shards: readonly string[],
  send: SendToShard,
): Promise<Response> {
  const url = new URL(request.url);
  let cursor: CombinedCursor;
  try {
    cursor = decodeCombined(url.searchParams.get("cursor"), shards);
  } catch (error) {
    return problemResponse(toProblem(error).problem);
  }
  const limit = Number(url.searchParams.get("limit") ?? 50);
  const open = shards.filter((name) => cursor[name] !== null);
  const pages = await Promise.all(
    open.map(async (name) => {
      const shardUrl = new URL(url);
      const at = cursor[name];
      if (at) shardUrl.searchParams.set("cursor", at);
      else shardUrl.searchParams.delete("cursor");
      const headers = new Headers(request.headers);
      headers.set(SHARD_HEADERS.itemCursors, "1");
      const response = await send(name, new Request(shardUrl, { method: "GET", headers }));
      return { name, response };
    }),
  );
  // A refusal of the query (400, 401) is the same from every shard: pass the first one on.
  const refused = pages.find((p) => p.response.status !== 200);
  if (refused !== undefined) {
    if (refused.response.status < 500) return refused.response;
    return problemResponse(
      toProblem(
        new FinalityError("store-unavailable", `ledger shard ${refused.name} did not answer the list`, {
          retryAfterMs: 1_000,
        }),
      ).problem,
    );
  }
  const read = await Promise.all(
    pages.map(async (p) => ({ name: p.name, page: (await p.response.json()) as ShardPage })),
  );
  const { items, next } = mergePages(read, cursor, limit, MERGE_KEY[url.pathname] ?? "id");
  return Response.json({ items, nextCursor: combinedNext(shards, next) });
}

/**
 * Merges each shard's next page newest first (by `key`) and takes `limit` items, always a prefix
 * of each shard's page; `next` resumes each shard right after what was taken from it.
 */
export function mergePages<T extends object>(
  read: readonly {
    name: string;
    page: { items: T[]; nextCursor: string | null; itemCursors: (string | null)[] };
  }[],
  cursor: CombinedCursor,
  limit: number,
  key: keyof T & string,
): { items: T[]; next: CombinedCursor } {
  const taken = new Map<string, number>(read.map((r) => [r.name, 0]));
  const items: T[] = [];
  while (items.length < limit) {
    let best: { name: string; item: T } | null = null;
    for (const { name, page } of read) {
      const item = page.items[taken.get(name) ?? 0];
      if (item !== undefined && (best === null || String(item[key]) > String(best.item[key])))
        best = { name, item };
    }
    if (best === null) break;
    items.push(best.item);
    taken.set(best.name, (taken.get(best.name) ?? 0) + 1);
  }
  const next: CombinedCursor = { ...cursor };
  for (const { name, page } of read) {
    const count = taken.get(name) ?? 0;
    if (count === page.items.length) next[name] = page.nextCursor;
    else if (count > 0) next[name] = page.itemCursors[count - 1] ?? "";
  }
  return { items, next };
}

/** The cursor of the next merged page; null once every shard has nothing more. */
export function combinedNext(shards: readonly string[], next: CombinedCursor): string | null {
  return shards.some((name) => next[name] !== null) ? encodeCombined(next) : null;
}

function encodeCombined(cursor: CombinedCursor): string {
  return btoa(JSON.stringify(cursor)).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
}

/** A cursor from another shard set (a reshard between pages) starts the shards it does not name. */
export function decodeCombined(text: string | null, shards: readonly string[]): CombinedCursor {
  const start = Object.fromEntries(shards.map((name) => [name, ""])) as CombinedCursor;
  if (text === null) return start;
  try {
    const parsed = JSON.parse(atob(text.replace(/-/g, "+").replace(/_/g, "/"))) as unknown;
    if (typeof parsed !== "object" || parsed === null) throw new Error("not an object");
    for (const name of shards) {
      const value = (parsed as Record<string, unknown>)[name];
      if (value === null || typeof value === "string") start[name] = value;
    }
    return start;
  } catch {
    throw new FinalityError("invalid-request", "cursor is not one this server gave out", {
      details: { field: "cursor" },
    });
  }
}
