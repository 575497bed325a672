import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeMergedCursor } from "../../src/cloudflare/merged-settlement-cursor.js";
import { shardIndexOf, shardLayout } from "../../src/cloudflare/shard-layout.js";
import { SECRET, signWith } from "../http/helpers/webhooks.js";
import { sseReader } from "../settlements/sse-client.js";
import { finalStateOf, inParallel, shuffled, webhookLoad } from "./helpers/shard-load.js";
import { type ShardedWorker, startShardedWorkers } from "./helpers/sharded-workers.js";

// The settlement feed of a sharded Worker (src/cloudflare/shard-settlements.ts), in workerd: the
// same jobs settled by signed webhooks over 4 shards and over one, read page by page, resumed,
// long-polled, streamed, and read across a reshard from 2 to 4 shards under load.

const JOBS = 120;
const base = {
  providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } },
  log: { level: "error" },
};

interface Settlement {
  cursor: string;
  provider: string;
  id: string;
  state: string;
  settledAt: string;
  job: { id: string } | null;
}
interface Page {
  items: Settlement[];
  cursor: string | null;
}

type Fetch = (path: string, init?: RequestInit) => Promise<Response>;

async function sendLoad(fetch: Fetch, load: ReturnType<typeof webhookLoad>): Promise<void> {
  await inParallel(load, 32, async (webhook) => {
    const response = await fetch("/webhooks/acme", {
      method: "POST",
      headers: webhook.headers,
      body: webhook.body,
    });
    expect(response.status).toBe(200);
    await response.arrayBuffer();
  });
}

let sent = 0;
async function settle(fetch: Fetch, id: string): Promise<void> {
  const body = JSON.stringify({ jobId: id, state: "succeeded", result: { id } });
  const response = await fetch("/webhooks/acme", {
    method: "POST",
    headers: signWith(SECRET, body, { id: `feed-${id}-${++sent}` }),
    body,
  });
  expect(response.status).toBe(200);
  await response.arrayBuffer();
}

async function page(fetch: Fetch, query: string): Promise<Page> {
  const response = await fetch(`/v1/settlements${query}`);
  if (response.status !== 200) throw new Error(`${query}: ${response.status} ${await response.text()}`);
  return (await response.json()) as Page;
}

/**
 * Every settlement after `after`, page by page. Checks, for the merged (sharded) feed, what makes
 * resuming safe: from one item's cursor to the next exactly one shard moves, by exactly one
 * settlement (each shard's feed numbers its settlements 1, 2, 3, ... and none is filtered out
 * here), so no shard's item is skipped or repeated, and each shard's order is kept.
 */
async function readAll(
  fetch: Fetch,
  after: string | null,
  limit: number,
  merged: boolean,
): Promise<{ items: Settlement[]; cursor: string | null; pages: number }> {
  const items: Settlement[] = [];
  let cursor = after;
  let pages = 0;
  for (;;) {
    const got = await page(fetch, `?limit=${limit}${cursor ? `&after=${encodeURIComponent(cursor)}` : ""}`);
    if (got.items.length === 0) {
      expect(got.cursor).toBe(cursor);
      return { items, cursor, pages };
    }
    pages++;
    expect(got.items.length).toBeLessThanOrEqual(limit);
    if (merged) {
      let previous = decodeMergedCursor(cursor, "after");
      for (const item of got.items) {
        const now = decodeMergedCursor(item.cursor, "after");
        const moved = [...new Set([...previous.keys(), ...now.keys()])].filter(
          (shard) => (now.get(shard) ?? 0) !== (previous.get(shard) ?? 0),
        );
        expect(moved.length, item.id).toBe(1);
        const shard = moved[0] as string;
        expect((now.get(shard) ?? 0) - (previous.get(shard) ?? 0), item.id).toBe(1);
        previous = now;
      }
      // Within a page: by settled time.
      const times = got.items.map((s) => s.settledAt);
      expect(times).toEqual([...times].sort());
    }
    expect(got.cursor).toBe(got.items.at(-1)?.cursor);
    items.push(...got.items);
    cursor = got.cursor;
  }
}

const ids = (items: Settlement[]) => items.map((s) => s.id);
const summary = (items: Settlement[]) => items.map((s) => `${s.provider}/${s.id}:${s.state}`).sort();

/** A job id that lands on shard `index` of `count`. */
function idOnShard(prefix: string, index: number, count: number): string {
  for (let i = 0; ; i++) {
    const id = `${prefix}-${i}`;
    if (shardIndexOf({ provider: "acme", id }, count) === index) return id;
  }
}

describe("the settlement feed merged over 4 shards", () => {
  const load = webhookLoad(JOBS, 31);
  let single: ShardedWorker;
  let four: ShardedWorker;
  const fourFetch: Fetch = (path, init) => four.fetch("v", path, init);
  let singleFeed: Settlement[] = [];

  beforeAll(async () => {
    // The single-shard run, then the same load over 4 shards.
    single = await startShardedWorkers([
      { name: "one", config: { ...base, cloudflare: { shards: 1 } } },
      { name: "after", config: { ...base, cloudflare: { shards: 4, previousShards: 1 } } },
    ]);
    await sendLoad((p, i) => single.fetch("one", p, i), load);
    four = await startShardedWorkers([{ name: "v", config: { ...base, cloudflare: { shards: 4 } } }]);
    await sendLoad(fourFetch, load);
  }, 600_000);
  afterAll(async () => {
    await single?.dispose();
    await four?.dispose();
  });

  it("gives each settlement exactly once, page by page, the same set as one shard", async () => {
    singleFeed = (await readAll((p, i) => single.fetch("one", p, i), null, 50, false)).items;
    expect(singleFeed).toHaveLength(JOBS);
    const { items, pages } = await readAll(fourFetch, null, 7, true);
    expect(pages).toBeGreaterThanOrEqual(Math.ceil(JOBS / 7));
    expect(new Set(ids(items)).size).toBe(items.length);
    expect(summary(items)).toEqual(summary(singleFeed));
    for (const s of items) expect(s.state, s.id).toBe(finalStateOf(s.id));
    // Every shard of the layout holds some of them (the merge read all four).
    const last = decodeMergedCursor(items.at(-1)?.cursor, "after");
    expect([...last.keys()].sort()).toEqual([...shardLayout(4).names].sort());
  });

  it("keeps the unsharded cursor format with one shard, and reads it after a reshard to 4", async () => {
    const oneFetch: Fetch = (p, i) => single.fetch("one", p, i);
    const cursor = singleFeed.at(-1)?.cursor as string;
    // One shard: the same cursors as before sharding existed (a plain row cursor).
    expect(cursor.startsWith("m1.")).toBe(false);
    expect((await page(oneFetch, `?after=${cursor}`)).items).toEqual([]);
    // Reshard 1 → 4: the saved cursor still resumes, with what settled on the new shards.
    const afterFetch: Fetch = (p, i) => single.fetch("after", p, i);
    const fresh = Array.from({ length: 8 }, (_, i) => `after-reshard-${i}`);
    for (const id of fresh) await settle(afterFetch, id);
    const resumed = await readAll(afterFetch, cursor, 3, true);
    expect(ids(resumed.items).sort()).toEqual([...fresh].sort());
    const fromStart = await readAll(afterFetch, null, 11, true);
    expect(fromStart.items).toHaveLength(JOBS + fresh.length);
  });

  it("resumes from a saved cursor after more settle: nothing skipped, nothing repeated", async () => {
    const first = await readAll(fourFetch, null, 13, true);
    const midway = first.items[40] as Settlement;
    const saved = first.cursor as string;
    const more = Array.from({ length: 12 }, (_, i) => `more-${i}`);
    await inParallel(more, 4, (id) => settle(fourFetch, id));
    const resumed = await readAll(fourFetch, saved, 5, true);
    expect(ids(resumed.items).sort()).toEqual([...more].sort());
    // From an item in the middle: exactly the rest, old and new.
    const fromMidway = await readAll(fourFetch, midway.cursor, 9, true);
    const expected = [...ids(first.items).slice(41), ...more];
    expect(ids(fromMidway.items).sort()).toEqual(expected.sort());
  });

  it("wakes a long poll on a settlement on the last shard, not at its deadline", async () => {
    const { cursor } = await readAll(fourFetch, null, 200, true);
    const id = idOnShard("late", 3, 4);
    const polling = page(fourFetch, `?after=${cursor}&wait=60`);
    // The poll is answered by the commit on shard 3: it would otherwise take the full 60 s, and
    // this test times out after 20.
    await settle(fourFetch, id);
    const woken = await polling;
    expect(ids(woken.items)).toEqual([id]);
    // Nothing new: a short wait answers empty, with the cursor it was given.
    expect(await page(fourFetch, `?after=${woken.cursor}&wait=1`)).toEqual({
      items: [],
      cursor: woken.cursor,
    });
  }, 20_000);

  it("streams over SSE, resumes from Last-Event-ID, and ids are merged cursors", async () => {
    const { items } = await readAll(fourFetch, null, 200, true);
    const from = items.length - 6;
    const response = await fourFetch("/v1/settlements/stream", {
      headers: { "last-event-id": items[from]?.cursor ?? "" },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    if (!response.body) throw new Error("no body");
    const events = sseReader(response.body);
    const backlog: Settlement[] = [];
    for (let i = from + 1; i < items.length; i++) {
      const event = await events.next();
      const data = JSON.parse(event?.data ?? "{}") as Settlement;
      expect(data.cursor).toBe(event?.id);
      backlog.push(data);
    }
    expect(ids(backlog).sort()).toEqual(ids(items.slice(from + 1)).sort());
    // Live, from shards other than the first.
    const live = [idOnShard("live", 2, 4), idOnShard("live", 1, 4)];
    for (const id of live) await settle(fourFetch, id);
    const seen = [await events.next(), await events.next()];
    expect(seen.map((e) => JSON.parse(e?.data ?? "{}").id).sort()).toEqual([...live].sort());
    await events.cancel();
    // The last id resumes after everything: a page from it is empty, a new settlement follows it.
    const lastId = seen[1]?.id as string;
    expect((await page(fourFetch, `?after=${encodeURIComponent(lastId)}`)).items).toEqual([]);
    const again = await fourFetch("/v1/settlements/stream", { headers: { "last-event-id": lastId } });
    const resumed = sseReader(again.body as ReadableStream<Uint8Array>);
    const next = idOnShard("next", 3, 4);
    await settle(fourFetch, next);
    expect(JSON.parse((await resumed.next())?.data ?? "{}").id).toBe(next);
    await resumed.cancel();
  }, 60_000);

  it("refuses a bad cursor with a 400 problem, on the page and on the stream", async () => {
    const good = (await page(fourFetch, "?limit=1")).cursor as string;
    // Well formed but for one thing each: a shard twice, a shard no layout has, a checksum, a version.
    const text = (pairs: string, sum?: string) => {
      let hash = 0x811c9dc5;
      for (const c of pairs) hash = Math.imul(hash ^ c.charCodeAt(0), 0x01000193) >>> 0;
      return `m1.${btoa(`${pairs}|${sum ?? hash.toString(16)}`).replace(/=+$/, "")}`;
    };
    expect((await page(fourFetch, `?after=${text("0.4=1")}`)).items.length).toBeGreaterThan(0);
    const bads = [text("0.4=1,0.4=2"), text("4.4=1"), text("0.4=1", "0"), `m2.${good.slice(3)}`];
    for (const bad of ["nope!", "m1.***", `${good}x`, good.slice(0, -2), ...bads]) {
      const response = await fourFetch(`/v1/settlements?after=${encodeURIComponent(bad)}`);
      expect(response.status, bad).toBe(400);
      expect(response.headers.get("content-type")).toContain("application/problem+json");
      expect(((await response.json()) as { field?: string }).field ?? "after").toBe("after");
    }
    // Well formed and checksummed, but past a shard's newest settlement: it would skip every
    // settlement that shard makes until its numbers caught up (issue #32). Refused everywhere.
    const past = text("0.4=1,1.4=999999");
    for (const path of ["/v1/settlements?after=", "/v1/settlements?wait=1&after="]) {
      const response = await fourFetch(`${path}${encodeURIComponent(past)}`);
      expect(response.status, path).toBe(400);
      expect(((await response.json()) as { detail?: string }).detail).toContain("after");
    }
    const pastStream = await fourFetch("/v1/settlements/stream", { headers: { "last-event-id": past } });
    expect(pastStream.status).toBe(400);
    expect(pastStream.headers.get("content-type")).toContain("application/problem+json");
    await pastStream.arrayBuffer();
    const stream = await fourFetch("/v1/settlements/stream", { headers: { "last-event-id": "m1.***" } });
    expect(stream.status).toBe(400);
    expect(stream.headers.get("content-type")).toContain("application/problem+json");
    await stream.arrayBuffer();
    const tooLong = await fourFetch("/v1/settlements?wait=61");
    expect(tooLong.status).toBe(400);
    await tooLong.arrayBuffer();
  });
});

describe("the settlement feed across a reshard from 2 to 4 under load", () => {
  const load = webhookLoad(JOBS, 32);
  let worker: ShardedWorker;
  beforeAll(async () => {
    worker = await startShardedWorkers([
      { name: "two", config: { ...base, cloudflare: { shards: 2 } } },
      { name: "four", config: { ...base, cloudflare: { shards: 4, previousShards: 2 } } },
    ]);
  }, 120_000);
  afterAll(async () => {
    await worker?.dispose();
  });

  it("loses and repeats nothing for a consumer that reads while the deploy rolls out", async () => {
    const rollout = shuffled(
      load.map((_, i) => i),
      9,
    );
    const versionOf = (index: number): "two" | "four" => {
      if (index < load.length * 0.4) return "two";
      if (index >= load.length * 0.7) return "four";
      return (rollout[index] as number) % 2 === 0 ? "two" : "four";
    };
    // The consumer reads pages while webhooks come in, from either Worker; a refusal of the old
    // one (its shards retired) is retried on the new one, as a client behind Cloudflare would.
    const consumed: Settlement[] = [];
    let cursor: string | null = null;
    let loading = true;
    let turn = 0;
    const readOnce = async () => {
      const version = turn++ % 2 === 0 ? "two" : "four";
      const query = `/v1/settlements?limit=6${cursor ? `&after=${encodeURIComponent(cursor)}` : ""}`;
      let response = await worker.fetch(version, query);
      if (response.status >= 500) {
        await response.arrayBuffer();
        response = await worker.fetch("four", query);
      }
      expect(response.status).toBe(200);
      const got = (await response.json()) as Page;
      consumed.push(...got.items);
      cursor = got.cursor;
      return got.items.length;
    };
    const consumer = (async () => {
      while (loading) await readOnce();
    })();
    await inParallel(load, 32, async (webhook, index) => {
      const send = (version: string) =>
        worker.fetch(version, "/webhooks/acme", {
          method: "POST",
          headers: webhook.headers,
          body: webhook.body,
        });
      const first = await send(versionOf(index));
      await first.arrayBuffer();
      if (first.status >= 500) {
        const retry = await send("four");
        await retry.arrayBuffer();
        expect(retry.status).toBe(200);
      } else expect(first.status).toBe(200);
    });
    loading = false;
    await consumer;
    while ((await readOnce()) > 0);
    expect(new Set(ids(consumed)).size).toBe(consumed.length);
    expect(consumed).toHaveLength(JOBS);
    for (const s of consumed) expect(s.state, s.id).toBe(finalStateOf(s.id));
    // Settlements of both layouts are in the feed (the old shards drain, they are still read).
    const positions = decodeMergedCursor(cursor, "after");
    expect([...positions.keys()].some((name) => name.endsWith("-of-2"))).toBe(true);
    expect([...positions.keys()].some((name) => name.endsWith("-of-4"))).toBe(true);
  }, 600_000);
});

describe("the merged settlement feed filtered by a kind that arrives after the job settled", () => {
  let worker: ShardedWorker;
  const fetch: Fetch = (path, init) => worker.fetch("v", path, init);
  beforeAll(async () => {
    worker = await startShardedWorkers([{ name: "v", config: { ...base, cloudflare: { shards: 4 } } }]);
  }, 120_000);
  afterAll(async () => {
    await worker?.dispose();
  });

  const register = async (id: string, kind: string) => {
    const response = await fetch("/v1/jobs", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ provider: "acme", id, kind }),
    });
    expect(response.status).toBeLessThan(300);
    await response.arrayBuffer();
  };
  /** Every item after `after` under `query`, page by page (a kind reader's cursor moves over gaps). */
  const readFiltered = async (query: string, after: string | null) => {
    const items: Settlement[] = [];
    let cursor = after;
    for (;;) {
      const got = await page(
        fetch,
        `?limit=2${query}${cursor ? `&after=${encodeURIComponent(cursor)}` : ""}`,
      );
      if (got.items.length === 0) return { items, cursor };
      items.push(...got.items);
      cursor = got.cursor;
    }
  };

  it("gives a kind reader each job by its final kind once, on every shard, resumed and streamed; the others once", async () => {
    // Settled by webhooks before anyone knew their kind, one on each shard; one registered first.
    const early = [0, 1, 2, 3].map((shard) => idOnShard("early", shard, 4));
    const known = idOnShard("known", 2, 4);
    await register(known, "render");
    for (const id of [...early, known]) await settle(fetch, id);
    const before = await readFiltered("&kind=render", null);
    expect(ids(before.items)).toEqual([known]);
    const stream = await fetch(`/v1/settlements/stream?kind=render`, {
      headers: { "last-event-id": before.cursor ?? "" },
    });
    expect(stream.status).toBe(200);
    const events = sseReader(stream.body as ReadableStream<Uint8Array>);

    // The kinds arrive: render for the jobs on shards 1 and 3, text for the one on shard 0.
    await register(early[1] as string, "render");
    await register(early[3] as string, "render");
    await register(early[0] as string, "text");
    await register(early[1] as string, "render"); // again: nothing more

    const resumed = await readFiltered("&kind=render", before.cursor);
    expect(ids(resumed.items).sort()).toEqual([early[1], early[3]].sort());
    // The stream opened before the kinds came is given the same two, live.
    const streamed = [await events.next(), await events.next()];
    expect(streamed.map((e) => JSON.parse(e?.data ?? "{}").id).sort()).toEqual([early[1], early[3]].sort());
    await events.cancel();
    for (const item of resumed.items) expect(item.job).toMatchObject({ id: item.id });
    expect(ids((await readFiltered("&kind=render", null)).items).sort()).toEqual(
      [known, early[1], early[3]].sort(),
    );
    expect(ids((await readFiltered("&kind=text", null)).items)).toEqual([early[0]]);
    // Unfiltered and by provider: each settlement once, as before the kinds came.
    for (const query of ["", "&provider=acme"]) {
      const all = ids((await readFiltered(query, null)).items);
      expect(all.sort(), query).toEqual([...early, known].sort());
    }
  }, 60_000);
});
