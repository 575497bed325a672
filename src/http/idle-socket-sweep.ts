import type { Server } from "node:http";
import type { Socket } from "node:net";

/** The sweep's tick at which an idle socket times out; 0 while it is not idle. */
const IDLE_UNTIL = Symbol("idleUntil");
/** The ticks its timeout lasts, to push the deadline back when bytes arrive. */
const IDLE_TICKS = Symbol("idleTicks");
/** Its bytes read when the deadline was last set. */
const IDLE_BYTES = Symbol("idleBytes");

type SweptSocket = Socket & { [IDLE_UNTIL]: number; [IDLE_TICKS]: number; [IDLE_BYTES]: number };

/**
 * Closes a server's idle keep-alive sockets from one sweep, not one timer per answer.
 *
 * Node's http server calls `socket.setTimeout(keepAliveTimeout + 1000)` when an answer leaves a
 * socket idle and `socket.setTimeout(0)` when the next request's head is read: a new Timeout for
 * every request, refreshed on each read while armed (~3,200 instructions a webhook, counted by
 * callgrind; bench/README.md, "The server's keep-alive timer"). On this server's sockets those two
 * calls only note the deadline, in ticks of a sweep that runs every `sweepMs` (unreferenced) and
 * emits `timeout` on each socket idle past it, which the server handles exactly as its own
 * timer's (`socketOnTimeout`: the idle socket is destroyed). As with Node's timer, bytes read
 * since the deadline was set (a request arriving) push it back instead. A socket closes up to two
 * sweeps after its timeout: later, never sooner, so a proxy in front, whose idle timeout is
 * shorter, still closes first. The deadline lives on the socket as small integers: no object,
 * no map entry and no clock read per answer. A call with a callback (nothing in this server makes
 * one) goes to the socket's own setTimeout.
 */
export function sweepIdleSockets(server: Server, sweepMs: number): void {
  const sockets = new Set<SweptSocket>();
  let tick = 1;
  server.on("connection", (plain: Socket) => {
    const socket = plain as SweptSocket;
    socket[IDLE_UNTIL] = 0;
    socket[IDLE_TICKS] = 0;
    socket[IDLE_BYTES] = 0;
    const ownSetTimeout = socket.setTimeout;
    socket.setTimeout = function setTimeout(this: SweptSocket, ms: number, callback?: () => void) {
      if (callback !== undefined) return ownSetTimeout.call(this, ms, callback);
      if (ms > 0) {
        // The tick now has partly passed: one more, so that a full `ms` passes before the close.
        this[IDLE_TICKS] = Math.ceil(ms / sweepMs) + 1;
        this[IDLE_UNTIL] = tick + this[IDLE_TICKS];
        this[IDLE_BYTES] = this.bytesRead;
      } else this[IDLE_UNTIL] = 0;
      return this;
    };
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  const sweep = setInterval(() => {
    tick++;
    for (const socket of sockets) {
      const until = socket[IDLE_UNTIL];
      if (until === 0 || until > tick) continue;
      if (socket.bytesRead !== socket[IDLE_BYTES]) {
        socket[IDLE_UNTIL] = tick + socket[IDLE_TICKS];
        socket[IDLE_BYTES] = socket.bytesRead;
        continue;
      }
      socket[IDLE_UNTIL] = 0;
      socket.emit("timeout");
    }
  }, sweepMs);
  sweep.unref();
  server.once("close", () => clearInterval(sweep));
}
