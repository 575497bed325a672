import { createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createHttp1Client, type Http1Origin } from "../../src/engine/http1-client.js";

// The lean client's connection handling, against raw sockets that answer exactly as each case
// needs: what node:http's Agent does (reuse, limits, queueing, idle sockets not holding the
// process) and what it adds (one resend when a kept-alive socket was closed under the request).

/** A raw server: `answer` is called with each request's socket and its index on that socket. */
interface RawServer {
  origin: Http1Origin;
  /** Every connection accepted, in order. */
  sockets: Socket[];
  /** Requests seen, as (connection index, request index on it). */
  requests: [number, number][];
  close(): Promise<void>;
}

const servers: RawServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function rawServer(
  answer: (socket: Socket, nth: number, connection: number) => void,
): Promise<RawServer> {
  const sockets: Socket[] = [];
  const requests: [number, number][] = [];
  const server: Server = createServer((socket) => {
    const connection = sockets.push(socket) - 1;
    let held = Buffer.alloc(0);
    let nth = 0;
    socket.on("error", () => {});
    socket.on("data", (bytes: Buffer) => {
      held = Buffer.concat([held, bytes]);
      // One request: a head, then Content-Length bytes.
      for (;;) {
        const end = held.indexOf("\r\n\r\n");
        if (end === -1) return;
        const length = Number(/content-length: (\d+)/i.exec(held.subarray(0, end).toString())?.[1] ?? 0);
        if (held.length < end + 4 + length) return;
        held = held.subarray(end + 4 + length);
        requests.push([connection, nth]);
        answer(socket, nth++, connection);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  const made: RawServer = {
    origin: { host: "127.0.0.1", port, key: `127.0.0.1:${port}` },
    sockets,
    requests,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  servers.push(made);
  return made;
}

const request = (body = "{}") =>
  Buffer.from(`POST /in HTTP/1.1\r\nhost: x\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
const noContent = "HTTP/1.1 204 No Content\r\n\r\n";

/** Resolves when the socket has closed. */
const closed = (socket: Socket) =>
  socket.destroyed
    ? Promise.resolve()
    : new Promise<void>((resolve) => socket.once("close", () => resolve()));

/** Resolves when `check` holds, re-checking as the event loop turns (no fixed sleep). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setImmediate(resolve));
}

describe("the lean HTTP/1.1 client", () => {
  it("carries one request after another on the same kept-alive socket", async () => {
    const server = await rawServer((socket) => socket.write(noContent));
    const client = createHttp1Client({ maxSockets: 4 });
    for (let i = 0; i < 3; i++) {
      await expect(client.send(server.origin, request()).answer).resolves.toEqual({
        status: 204,
        retryAfter: null,
      });
    }
    expect(server.requests).toEqual([
      [0, 0],
      [0, 1],
      [0, 2],
    ]);
  });

  it("opens no more than maxSockets per origin and queues the rest in order", async () => {
    const held: Socket[] = [];
    const server = await rawServer((socket) => held.push(socket));
    const client = createHttp1Client({ maxSockets: 2 });
    const answers = [1, 2, 3, 4].map(() => client.send(server.origin, request()).answer);
    await until(() => held.length === 2);
    expect(server.sockets).toHaveLength(2);
    // Each answer frees its socket for the next queued request: still two sockets in all.
    while (held.length > 0) (held.shift() as Socket).write(noContent);
    await until(() => held.length === 2);
    while (held.length > 0) (held.shift() as Socket).write(noContent);
    await expect(Promise.all(answers)).resolves.toHaveLength(4);
    expect(server.sockets).toHaveLength(2);
  });

  it("sends once more on a new socket when the reused one is closed before any answer, and only once", async () => {
    // Every second request on a socket is met with a close: as when a server's keep-alive
    // timeout fires just as the request goes out.
    const server = await rawServer((socket, nth) => (nth === 0 ? socket.write(noContent) : socket.destroy()));
    const client = createHttp1Client({ maxSockets: 1 });
    await client.send(server.origin, request()).answer;
    await expect(client.send(server.origin, request()).answer).resolves.toMatchObject({ status: 204 });
    expect(server.sockets).toHaveLength(2);

    // A new socket that closes without an answer is a failure, as in node:http: no resend.
    const closing = await rawServer((socket) => socket.destroy());
    await expect(client.send(closing.origin, request()).answer).rejects.toMatchObject({
      message: "socket hang up",
      code: "ECONNRESET",
    });
    expect(closing.requests).toHaveLength(1);

    // A reused socket that closes, then a new one that closes too: one resend, then the failure.
    const once = await rawServer((socket, nth, connection) =>
      connection === 0 && nth === 0 ? socket.write(noContent) : socket.destroy(),
    );
    await client.send(once.origin, request()).answer;
    await expect(client.send(once.origin, request()).answer).rejects.toThrow("socket hang up");
    expect(once.requests).toHaveLength(3);
  });

  it("does not resend once part of the answer has come", async () => {
    const server = await rawServer((socket, nth) =>
      nth === 0 ? socket.write(noContent) : socket.end("HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc"),
    );
    const client = createHttp1Client({ maxSockets: 1 });
    await client.send(server.origin, request()).answer;
    await expect(client.send(server.origin, request()).answer).rejects.toThrow("socket hang up");
    expect(server.requests).toHaveLength(2);
  });

  it("drops an idle socket the peer closed, and takes a new one for the next request", async () => {
    const server = await rawServer((socket) => socket.write(noContent));
    const client = createHttp1Client({ maxSockets: 1 });
    await client.send(server.origin, request()).answer;
    const first = server.sockets[0] as Socket;
    first.end();
    await closed(first);
    await expect(client.send(server.origin, request()).answer).resolves.toMatchObject({ status: 204 });
    expect(server.sockets).toHaveLength(2);
  });

  it("closes a socket after an answer it cannot reuse: Connection: close, a body to the close, HTTP/1.0", async () => {
    const answers = [
      "HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n",
      "HTTP/1.0 204 No Content\r\n\r\n",
    ];
    for (const answer of answers) {
      const server = await rawServer((socket) => socket.write(answer));
      const client = createHttp1Client({ maxSockets: 1 });
      await client.send(server.origin, request()).answer;
      await client.send(server.origin, request()).answer;
      expect(server.sockets).toHaveLength(2);
    }
    // No length and no coding: the body runs to the close, and the answer is whole then.
    const server = await rawServer((socket) =>
      socket.end("HTTP/1.1 503 Busy\r\nretry-after: 7\r\n\r\nlater"),
    );
    const client = createHttp1Client({ maxSockets: 1 });
    await expect(client.send(server.origin, request()).answer).resolves.toEqual({
      status: 503,
      retryAfter: "7",
    });
  });

  it("keeps HTTP/1.0 alive when the server says keep-alive", async () => {
    const server = await rawServer((socket) =>
      socket.write("HTTP/1.0 200 OK\r\nconnection: keep-alive\r\ncontent-length: 2\r\n\r\nok"),
    );
    const client = createHttp1Client({ maxSockets: 1 });
    await client.send(server.origin, request()).answer;
    await client.send(server.origin, request()).answer;
    expect(server.sockets).toHaveLength(1);
  });

  it("fails the request and closes the socket on framing it cannot read", async () => {
    const server = await rawServer((socket) =>
      socket.write("HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\nok"),
    );
    const client = createHttp1Client({ maxSockets: 1 });
    await expect(client.send(server.origin, request()).answer).rejects.toMatchObject({
      code: "HPE_UNEXPECTED_CONTENT_LENGTH",
    });
    await closed(server.sockets[0] as Socket);
  });

  it("closes a socket that sends bytes after its answer, or while idle", async () => {
    const trailing = await rawServer((socket) => socket.write(`${noContent}HTTP/1.1 200 OK\r\n`));
    const client = createHttp1Client({ maxSockets: 1 });
    await client.send(trailing.origin, request()).answer;
    await closed(trailing.sockets[0] as Socket);

    const idle = await rawServer((socket) => socket.write(noContent));
    await client.send(idle.origin, request()).answer;
    const first = idle.sockets[0] as Socket;
    first.write("HTTP/1.1 200 OK\r\n\r\n");
    await closed(first);
    await client.send(idle.origin, request()).answer;
    expect(idle.sockets).toHaveLength(2);
  });

  it("skips informational answers and reads the body in any chunking", async () => {
    const server = await rawServer((socket) => {
      const answer =
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n" +
        "HTTP/1.1 429 Too Many\r\ntransfer-encoding: chunked\r\nretry-after: 120\r\n\r\n" +
        "5;ext=1\r\nhello\r\n0\r\nx-trailer: t\r\n\r\n";
      // One byte at a time.
      for (const byte of Buffer.from(answer)) socket.write(Buffer.from([byte]));
    });
    const client = createHttp1Client({ maxSockets: 1 });
    await expect(client.send(server.origin, request()).answer).resolves.toEqual({
      status: 429,
      retryAfter: "120",
    });
    await client.send(server.origin, request()).answer;
    expect(server.sockets).toHaveLength(1);
  });

  it("does not reuse a socket past the server's Keep-Alive timeout hint (less a second)", async () => {
    const server = await rawServer((socket) =>
      socket.write("HTTP/1.1 204 No Content\r\nkeep-alive: timeout=1\r\n\r\n"),
    );
    const client = createHttp1Client({ maxSockets: 1 });
    await client.send(server.origin, request()).answer;
    await client.send(server.origin, request()).answer;
    expect(server.sockets).toHaveLength(2);
    const lasting = await rawServer((socket) =>
      socket.write("HTTP/1.1 204 No Content\r\nkeep-alive: timeout=60\r\n\r\n"),
    );
    await client.send(lasting.origin, request()).answer;
    await client.send(lasting.origin, request()).answer;
    expect(lasting.sockets).toHaveLength(1);
  });

  it("stops a queued request without sending it, and an in-flight one by closing its socket", async () => {
    const held: Socket[] = [];
    const server = await rawServer((socket) => held.push(socket));
    const client = createHttp1Client({ maxSockets: 1 });
    const first = client.send(server.origin, request("first"));
    const second = client.send(server.origin, request("second"));
    await until(() => held.length === 1);
    second.stop(new Error("stopped while queued"));
    await expect(second.answer).rejects.toThrow("stopped while queued");
    first.stop(new Error("stopped in flight"));
    await expect(first.answer).rejects.toThrow("stopped in flight");
    await closed(held[0] as Socket);
    // The slot is free again, and the stopped queued request was never sent.
    held.length = 0;
    const third = client.send(server.origin, request("third"));
    await until(() => held.length === 1);
    (held[0] as Socket).write(noContent);
    await third.answer;
    expect(server.requests).toEqual([
      [0, 0],
      [1, 0],
    ]);
  });

  it("fails with the socket's own error when the origin cannot be reached", async () => {
    const server = await rawServer(() => {});
    const origin = server.origin;
    await server.close();
    servers.length = 0;
    const client = createHttp1Client({ maxSockets: 1 });
    await expect(client.send(origin, request()).answer).rejects.toMatchObject({
      code: "ECONNREFUSED",
      message: `connect ECONNREFUSED 127.0.0.1:${origin.port}`,
    });
  });

  it("leaves idle sockets unreferenced, so they never hold the process open", async () => {
    const server = await rawServer((socket) => socket.write(noContent));
    const client = createHttp1Client({ maxSockets: 1 });
    const sockets = () => process.getActiveResourcesInfo().filter((kind) => kind === "TCPSocketWrap").length;
    const before = sockets();
    const sent = client.send(server.origin, request());
    await until(() => server.requests.length === 1);
    // In flight, the client's socket (and the server's side of it) are counted.
    expect(sockets()).toBeGreaterThan(before);
    await sent.answer;
    // Idle: only the server's side remains.
    expect(sockets()).toBe(before + 1);
  });
});
