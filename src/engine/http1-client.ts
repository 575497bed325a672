import { connect, type Socket } from "node:net";
import { COMPLETE, Http1ResponseReader } from "./http1-response.js";

/**
 * A plain-HTTP/1.1 client for effect POSTs: keep-alive sockets per origin, each request written as
 * one buffer, each answer framed by `Http1ResponseReader` and its body skipped. It exists for CPU:
 * a delivery through node:http's ClientRequest and Agent costs ~160,000 instructions, this ~25,000
 * (bench/README.md, "A lean client for effect POSTs"), and the dispatcher shares the process with
 * intake. https stays on node:https (node-http-transport.ts).
 *
 * What node:http's Agent does that this keeps: at most `maxSockets` connections per origin, the
 * rest queued in order; idle sockets unreferenced (they never hold the process open) and dropped
 * when the peer closes them or its `Keep-Alive: timeout` hint is near; TCP keep-alive and no Nagle.
 * What it adds: a request that finds its reused socket closed before a byte of the answer came is
 * sent once more on a new connection (the receiver dedupes deliveries on `webhook-id`), where
 * node:http fails it with "socket hang up".
 */

export interface Http1Origin {
  /** Bare host (an IPv6 literal without brackets) and port: where to connect. */
  readonly host: string;
  readonly port: number;
  /** `host:port`, the pool's key. */
  readonly key: string;
}

export interface Http1Answer {
  status: number;
  retryAfter: string | null;
}

/** One request's life: queued, then on a connection, then settled exactly once. */
interface Exchange {
  readonly origin: Http1Origin;
  readonly bytes: Buffer;
  readonly resolve: (answer: Http1Answer) => void;
  readonly reject: (error: Error) => void;
  connection: Connection | null;
  settled: boolean;
  /** Sent once more on a new connection already (see the class comment). */
  resent: boolean;
}

/** A server's keep-alive hint is cut by this much, so a socket is not taken just as it closes. */
const KEEP_ALIVE_MARGIN_MS = 1000;
/** Origins with nothing open or queued are forgotten past this many. */
const MAX_ORIGINS = 256;

interface Http1Client {
  /** Sends `bytes` (one whole request) to `origin`; `stop()` on the handle abandons it. */
  send(origin: Http1Origin, bytes: Buffer): { answer: Promise<Http1Answer>; stop: (error: Error) => void };
}

export function createHttp1Client(options: { maxSockets: number }): Http1Client {
  const pools = new Map<string, OriginPool>();

  function poolOf(origin: Http1Origin): OriginPool {
    let pool = pools.get(origin.key);
    if (pool === undefined) {
      if (pools.size >= MAX_ORIGINS) {
        for (const [key, each] of pools) if (each.open === 0 && each.queue.length === 0) pools.delete(key);
      }
      pool = new OriginPool(options.maxSockets);
      pools.set(origin.key, pool);
    }
    return pool;
  }

  return {
    send(origin, bytes) {
      let stop: (error: Error) => void = () => {};
      const answer = new Promise<Http1Answer>((resolve, reject) => {
        const exchange: Exchange = {
          origin,
          bytes,
          resolve,
          reject,
          connection: null,
          settled: false,
          resent: false,
        };
        const pool = poolOf(origin);
        stop = (error) => {
          if (exchange.settled) return;
          if (exchange.connection === null) pool.unqueue(exchange);
          else exchange.connection.destroy();
          settle(exchange, error);
        };
        pool.dispatch(exchange);
      });
      return { answer, stop };
    },
  };
}

function settle(exchange: Exchange, outcome: Http1Answer | Error): void {
  if (exchange.settled) return;
  exchange.settled = true;
  exchange.connection = null;
  if (outcome instanceof Error) exchange.reject(outcome);
  else exchange.resolve(outcome);
}

/** One origin's sockets: the idle ones (newest last) and the requests waiting for one. */
class OriginPool {
  readonly idle: Connection[] = [];
  readonly queue: Exchange[] = [];
  /** Connections open or opening, busy or idle. */
  open = 0;

  constructor(private readonly maxSockets: number) {}

  dispatch(exchange: Exchange): void {
    const now = Date.now();
    while (this.idle.length > 0) {
      const connection = this.idle.pop() as Connection;
      if (connection.usableAt(now)) {
        connection.carry(exchange);
        return;
      }
      connection.destroy();
    }
    if (this.open < this.maxSockets) {
      this.open++;
      new Connection(this, exchange.origin).carry(exchange);
      return;
    }
    this.queue.push(exchange);
  }

  unqueue(exchange: Exchange): void {
    const at = this.queue.indexOf(exchange);
    if (at !== -1) this.queue.splice(at, 1);
  }

  /** A connection finished its answer and may carry another. */
  release(connection: Connection): void {
    const next = this.queue.shift();
    if (next !== undefined) connection.carry(next);
    else {
      connection.rest();
      this.idle.push(connection);
    }
  }

  /** A connection closed: it is forgotten, and `resend` or a queued request may open another. */
  closed(connection: Connection, resend?: Exchange): void {
    this.open--;
    const at = this.idle.indexOf(connection);
    if (at !== -1) this.idle.splice(at, 1);
    const next = resend ?? this.queue.shift();
    if (next !== undefined) this.dispatch(next);
  }
}

class Connection {
  private readonly socket: Socket;
  private readonly reader = new Http1ResponseReader();
  private exchange: Exchange | null = null;
  /** Whether this connection carried an answer before the current request. */
  private reused = false;
  /** Whether any byte of the current answer has come. */
  private answering = false;
  private idleSince = 0;
  /** The server's last `Keep-Alive: timeout` hint, in ms (null: none). */
  private keepAliveMs: number | null = null;
  private closed = false;
  private failure: Error | null = null;

  constructor(
    private readonly pool: OriginPool,
    origin: Http1Origin,
  ) {
    this.socket = connect({
      host: origin.host,
      port: origin.port,
      noDelay: true,
      keepAlive: true,
      keepAliveInitialDelay: 1000,
    });
    this.socket.on("data", (bytes: Buffer) => this.onData(bytes));
    this.socket.on("error", (error: Error) => {
      this.failure ??= error;
    });
    this.socket.on("close", () => this.onClose());
  }

  /** Whether an idle connection can take a request at `now` (open, and not past the server's hint). */
  usableAt(now: number): boolean {
    if (this.closed) return false;
    const limit = this.keepAliveMs;
    return limit === null || now - this.idleSince < limit - KEEP_ALIVE_MARGIN_MS;
  }

  carry(exchange: Exchange): void {
    this.exchange = exchange;
    exchange.connection = this;
    this.answering = false;
    if (this.reused) this.socket.ref();
    this.socket.write(exchange.bytes);
  }

  /** Idle: it must not hold the process open. */
  rest(): void {
    this.reused = true;
    this.idleSince = Date.now();
    this.socket.unref();
  }

  destroy(): void {
    this.socket.destroy();
  }

  private onData(bytes: Buffer): void {
    const exchange = this.exchange;
    // Bytes nobody asked for: the connection's framing is in doubt.
    if (exchange === null) {
      this.destroy();
      return;
    }
    this.answering = true;
    let state: number;
    try {
      state = this.reader.read(bytes);
    } catch (error) {
      this.destroy();
      settle(exchange, error as Error);
      return;
    }
    if (state !== COMPLETE) return;
    const answer: Http1Answer = { status: this.reader.status, retryAfter: this.reader.retryAfter };
    const reusable = this.reader.reusable && this.reader.leftover === 0;
    this.keepAliveMs = this.reader.keepAliveMs;
    this.exchange = null;
    this.reader.reset();
    settle(exchange, answer);
    if (reusable) this.pool.release(this);
    else this.destroy();
  }

  private onClose(): void {
    this.closed = true;
    const exchange = this.exchange;
    this.exchange = null;
    if (exchange !== null && !exchange.settled) {
      if (this.answering && this.reader.closedComplete()) {
        settle(exchange, { status: this.reader.status, retryAfter: this.reader.retryAfter });
      } else if (this.reused && !this.answering && !exchange.resent) {
        // The peer closed the kept-alive socket as the request went out: once more, on a new one.
        exchange.resent = true;
        exchange.connection = null;
        this.pool.closed(this, exchange);
        return;
      } else settle(exchange, this.failure ?? hangUp());
    }
    this.pool.closed(this);
  }
}

/** What node:http fails a request with when the socket closes before the answer is whole. */
function hangUp(): Error {
  return Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
}
