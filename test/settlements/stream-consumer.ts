import { SECRET, signWith } from "../http/helpers/webhooks.js";
import { sseReader } from "./sse-client.js";

export interface Received {
  cursor: string;
  id: string;
}

/**
 * A settlement stream client as an application would write one: it keeps the last cursor it
 * handled and, when the stream breaks, reconnects (to whatever URL it is given) with that
 * cursor as Last-Event-ID. `received` is everything it handled, in order.
 */
export function streamConsumer() {
  const received: Received[] = [];
  let last: string | undefined;
  let connection: { stop: AbortController; ended: Promise<void> } | null = null;
  const waiters: (() => void)[] = [];
  let connections = 0;

  async function pump(url: string, stop: AbortController): Promise<void> {
    try {
      const response = await fetch(`${url}/v1/settlements/stream`, {
        headers: last === undefined ? {} : { "last-event-id": last },
        signal: stop.signal,
      });
      if (response.status !== 200 || response.body === null)
        throw new Error(`stream answered ${response.status}`);
      connections++;
      const events = sseReader(response.body);
      for (;;) {
        const event = await events.next();
        if (event === null) return;
        const item = JSON.parse(event.data) as { cursor: string; id: string };
        if (event.id !== item.cursor) throw new Error(`id ${event.id} is not the cursor ${item.cursor}`);
        received.push({ cursor: item.cursor, id: item.id });
        last = item.cursor;
        for (const wake of waiters.splice(0)) wake();
      }
    } catch {
      // The server went away (SIGKILL): the caller reconnects with the last cursor.
    }
  }

  return {
    received,
    connections: () => connections,
    /** (Re)connects to `url` once the previous connection has ended. */
    async connect(url: string): Promise<void> {
      if (connection) await connection.ended;
      const stop = new AbortController();
      connection = { stop, ended: pump(url, stop) };
    },
    /** Resolves when the connection ended by itself (the server died). */
    ended: () => connection?.ended ?? Promise.resolve(),
    async until(done: () => boolean): Promise<void> {
      while (!done()) await new Promise<void>((resolve) => waiters.push(resolve));
    },
    async close(): Promise<void> {
      connection?.stop.abort();
      await connection?.ended;
    },
  };
}

/**
 * Settles jobs `ids` by signed webhooks to `url()`, `concurrency` at once; a webhook whose
 * answer never came (the server was killed) is left in `unacknowledged` for a resend under
 * the same webhook id, as a provider would retry it.
 */
export async function settleByWebhook(url: () => string, ids: readonly string[], concurrency = 8) {
  const unacknowledged: string[] = [];
  let next = 0;
  async function lane(): Promise<void> {
    while (next < ids.length) {
      const id = ids[next++] as string;
      const body = JSON.stringify({ jobId: id, state: "succeeded", result: { id } });
      try {
        const response = await fetch(`${url()}/webhooks/acme`, {
          method: "POST",
          headers: signWith(SECRET, body, { id: `settle-${id}` }),
          body,
        });
        await response.arrayBuffer();
        if (response.status !== 200) throw new Error(`webhook answered ${response.status}`);
      } catch {
        unacknowledged.push(id);
      }
    }
  }
  await Promise.all(Array.from({ length: concurrency }, lane));
  return unacknowledged;
}

/** Every id once, cursors strictly in the order the feed gives them. */
export function checkExactlyOnce(
  received: readonly Received[],
  expected: readonly string[],
  order: readonly string[],
) {
  const ids = received.map((r) => r.id);
  return {
    duplicates: ids.filter((id, i) => ids.indexOf(id) !== i),
    missing: expected.filter((id) => !ids.includes(id)),
    inFeedOrder: JSON.stringify(received.map((r) => r.cursor)) === JSON.stringify(order),
  };
}
