import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/temp-dir.js";
import { SECRET, signWith } from "../http/helpers/webhooks.js";
import { type startEdge as StartEdge, startEdge } from "./edge-server.js";
import { liveBytes, MiB, rawClient } from "./memory.js";

// Slow readers of the settlement stream (SSE) against the real Node server: clients that read
// the headers and 64 KB, then stop. Each stream may hold one batch of the feed and its queue,
// whatever the backlog behind its cursor (docs/operations.md, "Bounded resources"). Before,
// the stream read the whole backlog into memory, once per such client.

/** The documented growth per slow stream client (docs/operations.md) with 100 KB results. */
const PER_SLOW_STREAM = 8 * MiB;
const BACKLOG = 240;
const RESULT = "x".repeat(100_000);

const dir = tempDir("finality-slow-readers-");
let edge: Awaited<ReturnType<typeof StartEdge>> | undefined;
afterEach(async () => {
  await edge?.close();
  edge = undefined;
});

async function settleBacklog(url: string): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < BACKLOG) {
      const id = `backlog-${next++}`;
      const body = JSON.stringify({ jobId: id, state: "succeeded", result: { blob: RESULT } });
      const response = await fetch(`${url}/webhooks/acme`, {
        method: "POST",
        headers: signWith(SECRET, body),
        body,
      });
      expect(response.status).toBe(200);
      await response.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: 8 }, lane));
}

/**
 * Resolves once `count()` has not changed for `quietMs`: there is no event for "the server
 * stopped reading", so a quiet period is the only way to tell; a server that reads on to the
 * end of the backlog is seen just the same (its count stops at the backlog).
 */
async function quiet(count: () => number, quietMs = 750): Promise<void> {
  let last = -1;
  while (count() !== last) {
    last = count();
    await new Promise((resolve) => setTimeout(resolve, quietMs));
  }
}

describe("slow settlement stream readers", () => {
  it("hold at most one batch of the feed each, however long the backlog", async () => {
    edge = await startEdge(dir.file(`sse-${Date.now()}.db`));
    await settleBacklog(edge.url);
    const store = edge.finality.store;
    const read = store.readSettlements.bind(store);
    let itemsRead = 0;
    store.readSettlements = async (query) => {
      const page = await read(query);
      itemsRead += page.items.length;
      return page;
    };
    const before = liveBytes();
    const clients = await Promise.all([rawClient(edge.url), rawClient(edge.url)]);
    for (const client of clients) {
      await client.write("GET /v1/settlements/stream HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n");
      await client.received(64 * 1024);
      client.socket.pause();
    }
    await quiet(() => itemsRead);
    const growth = liveBytes() - before;
    for (const client of clients) client.close();
    // The streams stopped reading long before the end of the backlog (both together read less
    // than one backlog; what they read fills the sockets' kernel buffers, not the heap)...
    expect(itemsRead).toBeLessThan(BACKLOG);
    // ...and holds no more than the documented figure.
    expect(growth / clients.length).toBeLessThan(PER_SLOW_STREAM);
  }, 120_000);
});
