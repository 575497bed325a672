import { once } from "node:events";
import { connect, type Socket } from "node:net";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** Live memory of this process after full collections: the JS heap and the bytes of Buffers. */
export function liveBytes(): number {
  gc();
  gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
}

export const MiB = 1024 * 1024;

/** A client on a raw loopback socket: it writes what it is told and keeps what comes back. */
export async function rawClient(url: string) {
  const { hostname, port } = new URL(url);
  const socket: Socket = connect(Number(port), hostname);
  await once(socket, "connect");
  let received = Buffer.alloc(0);
  let receivedBytes = 0;
  const waiters: { until: () => boolean; resolve: () => void }[] = [];
  const check = () => {
    for (const waiter of waiters.splice(0)) {
      if (waiter.until()) waiter.resolve();
      else waiters.push(waiter);
    }
  };
  socket.on("data", (chunk: Buffer) => {
    receivedBytes += chunk.length;
    // Only the start is kept (the status line and headers); the rest is counted.
    if (received.length < 4096) received = Buffer.concat([received, chunk]).subarray(0, 4096);
    check();
  });
  socket.on("error", () => {});
  socket.on("close", check);
  const until = (done: () => boolean) =>
    done() ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ until: done, resolve }));
  return {
    socket,
    receivedBytes: () => receivedBytes,
    /** The status line of the answer, once it came (null: the socket closed first). */
    async status(): Promise<string | null> {
      await until(() => received.includes("\r\n") || socket.destroyed || socket.readableEnded);
      const text = received.toString("latin1");
      return text.includes("\r\n") ? (text.split("\r\n")[0] as string) : null;
    },
    /** Resolves once `bytes` have arrived in all (or the socket closed). */
    received: (bytes: number) =>
      until(() => receivedBytes >= bytes || socket.destroyed || socket.readableEnded),
    write: (data: string | Buffer) => new Promise<void>((resolve) => socket.write(data, () => resolve())),
    close: () => socket.destroy(),
  };
}
