import { toError } from "../../core/errors.js";
import { DeliveryError } from "../delivery-error.js";

// One broker connection, opened on first use and kept. When it breaks (the client reports it
// closed) it is dropped, and the next delivery opens a new one — but not sooner than a backoff
// after the last failed attempt (100 ms, doubling, at most 30 s), so a broker that is down costs
// one failed connect per backoff step instead of one per due effect. Deliveries in the meantime
// fail at once with the last error, and the outbox retries them on its own schedule: nothing
// waits on a dead broker, webhook intake least of all.

export interface ConnectionKeeper<C> {
  /** The kept connection, or a new one. Throws a DeliveryError while the broker is unreachable. */
  get(): Promise<C>;
  /** Forgets `connection` (it broke) and closes it; a later `get` opens another. */
  drop(connection: C, reason?: unknown): void;
  status(): { connected: boolean; error?: string };
  close(): Promise<void>;
}

interface KeeperOptions<C> {
  /** What the errors call the destination, without credentials (`nats://127.0.0.1:4222`). */
  name: string;
  open(): Promise<C>;
  close(connection: C): Promise<void>;
  now: () => number;
  /** Scrubs credentials out of a client's error message. */
  redact: (text: string) => string;
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

export function keepConnection<C>(options: KeeperOptions<C>): ConnectionKeeper<C> {
  const minMs = options.minBackoffMs ?? 100;
  const maxMs = options.maxBackoffMs ?? 30_000;
  let current: C | null = null;
  let opening: Promise<C> | null = null;
  let failures = 0;
  let nextTryAt = 0;
  let lastError: string | undefined;
  let closed = false;

  async function open(): Promise<C> {
    try {
      const connection = await options.open();
      if (closed) {
        await options.close(connection).catch(() => {});
        throw new DeliveryError(`${options.name}: the connection was closed`);
      }
      current = connection;
      failures = 0;
      lastError = undefined;
      return connection;
    } catch (error) {
      failures += 1;
      nextTryAt = options.now() + Math.min(maxMs, minMs * 2 ** (failures - 1));
      lastError = options.redact(toError(error).message);
      throw new DeliveryError(`${options.name} is unreachable: ${lastError}`);
    } finally {
      opening = null;
    }
  }

  return {
    async get() {
      if (current !== null) return current;
      if (opening !== null) return opening;
      if (failures > 0 && options.now() < nextTryAt)
        throw new DeliveryError(
          `${options.name} is unreachable: ${lastError ?? "connection failed"} (next try in ${nextTryAt - options.now()} ms)`,
        );
      closed = false;
      opening = open();
      return opening;
    },
    drop(connection, reason) {
      if (current !== connection) return;
      current = null;
      if (reason !== undefined) lastError = options.redact(toError(reason).message);
      void options.close(connection).catch(() => {});
    },
    status() {
      return current !== null
        ? { connected: true }
        : { connected: false, ...(lastError ? { error: lastError } : {}) };
    },
    async close() {
      closed = true;
      const connection = current ?? (opening ? await opening.catch(() => null) : null);
      current = null;
      if (connection !== null) await options.close(connection).catch(() => {});
    },
  };
}
