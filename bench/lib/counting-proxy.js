import { createConnection, createServer } from "node:net";

/**
 * A TCP proxy on 127.0.0.1 in front of PostgreSQL that counts, while `counting`, what the
 * clients send: round trips (each time a connection sends after it last heard from the server,
 * or sends first: a pipelined batch is one) and statements (Query 'Q' and Sync 'S' messages:
 * each ends one statement's exchange). It parses the frontend protocol's framing only. Both
 * sides with Nagle off, as node-postgres's own socket: a pipelined second write would otherwise
 * wait for the first one's (delayed) ACK, 40 ms here, and the proxy would be what is measured.
 */
export async function countingProxy(target) {
  const counts = { roundTrips: 0, statements: 0 };
  let counting = false;
  const sockets = new Set();
  const server = createServer({ noDelay: true }, (client) => {
    const upstream = createConnection({ ...target, noDelay: true });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("error", () => {});
      socket.on("close", () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    // The server spoke last (or nobody has yet): the client's next bytes start a round trip.
    let heardFromServer = true;
    const frames = frontendFrames((type) => {
      if (counting && (type === 0x51 || type === 0x53)) counts.statements++;
    });
    client.on("data", (chunk) => {
      if (counting && heardFromServer) counts.roundTrips++;
      heardFromServer = false;
      frames(chunk);
      upstream.write(chunk);
    });
    upstream.on("data", (chunk) => {
      heardFromServer = true;
      client.write(chunk);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    url(url) {
      const proxied = new URL(url);
      proxied.hostname = "127.0.0.1";
      proxied.port = String(port);
      return proxied.toString();
    },
    /** Counts from zero until `stop()`; returns the counts so far. */
    start() {
      counts.roundTrips = 0;
      counts.statements = 0;
      counting = true;
    },
    stop() {
      counting = false;
      return { ...counts };
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Calls `onMessage(type)` for each message a client sends: the first (startup or SSL request)
 * has no type byte, every later one is a type byte and a 4-byte length that counts itself.
 */
function frontendFrames(onMessage) {
  let pending = Buffer.alloc(0);
  let started = false;
  return (chunk) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    let at = 0;
    for (;;) {
      if (!started) {
        if (pending.length - at < 4) break;
        const length = pending.readInt32BE(at);
        if (pending.length - at < length) break;
        // An SSLRequest (80877103) is answered with one byte, then the real startup follows.
        started = pending.readInt32BE(at + 4) !== 80877103;
        at += length;
        continue;
      }
      if (pending.length - at < 5) break;
      const length = pending.readInt32BE(at + 1);
      if (pending.length - at < 1 + length) break;
      onMessage(pending[at]);
      at += 1 + length;
    }
    pending = pending.subarray(at);
  };
}
