import type { Server } from "node:http";
import type { Socket } from "node:net";

/**
 * Closes a server's idle keep-alive sockets from one sweep, not one timer per answer.
 *
 * Node's http server calls `socket.setTimeout(keepAliveTimeout + 1000)` when an answer leaves a
 * socket idle and `socket.setTimeout(0)` when the next request's head is read: a new Timeout for every
 * request, refreshed on each read while armed (~9,000 instructions a webhook, counted by
 * callgrind; bench/README.md, "The server's keep-alive timer"). On this server's sockets those two
 * calls only note the deadline, and a sweep every `sweepMs` (unreferenced) emits `timeout` on each
 * socket idle past it, which the server handles exactly as its own timer's (`socketOnTimeout`:
 * the idle socket is destroyed). As with Node's timer, bytes read since the deadline was set
 * (a request arriving) push it back instead. A socket closes up to `sweepMs` after its timeout:
 * later, never sooner, so a proxy in front, whose idle timeout is shorter, still closes first.
 * A call with a callback (nothing in this server makes one) goes to the socket's own setTimeout.
 */
export function sweepIdleSockets(server: Server, sweepMs: number): void {
  /** Each armed socket's deadline, its timeout, and its bytes read when armed. */
  const armed = new Map<Socket, { deadline: number; ms: number; bytesRead: number }>();
  server.on("connection", (socket: Socket) => {
    const ownSetTimeout = socket.setTimeout;
    socket.setTimeout = function setTimeout(this: Socket, ms: number, callback?: () => void) {
      if (callback !== undefined) return ownSetTimeout.call(this, ms, callback);
      if (ms > 0) armed.set(this, { deadline: Date.now() + ms, ms, bytesRead: this.bytesRead });
      else armed.delete(this);
      return this;
    };
    socket.once("close", () => armed.delete(socket));
  });
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const [socket, idle] of armed) {
      if (idle.deadline > now) continue;
      if (socket.bytesRead !== idle.bytesRead) {
        idle.deadline = now + idle.ms;
        idle.bytesRead = socket.bytesRead;
        continue;
      }
      armed.delete(socket);
      socket.emit("timeout");
    }
  }, sweepMs);
  sweep.unref();
  server.once("close", () => clearInterval(sweep));
}
