import { createConnection, createServer, type Socket } from "node:net";

/**
 * A TCP proxy on 127.0.0.1 to `target` that can go silent: `freeze()` stops passing bytes either
 * way while every connection stays open (a frozen server, or a network dropping packets: no
 * refusal, no reset, nothing to go by but a deadline); `thaw()` passes them on again. The shared
 * PostgreSQL server cannot be stopped (SIGSTOP) by a test: this plays its silence for one client.
 */
export async function freezableProxy(target: { host: string; port: number }) {
  const sockets = new Set<Socket>();
  const clients = new Set<Socket>();
  let frozen = false;
  const server = createServer({ noDelay: true }, (client) => {
    clients.add(client);
    client.on("close", () => clients.delete(client));
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
    client.pipe(upstream);
    upstream.pipe(client);
    // After pipe(), which resumes a paused source: a connection opened while frozen stays silent.
    if (frozen) for (const socket of [client, upstream]) socket.pause();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    /** `url` with its host and port replaced by the proxy's. */
    url(url: string): string {
      const proxied = new URL(url);
      proxied.hostname = "127.0.0.1";
      proxied.port = String(port);
      return proxied.toString();
    },
    /** Client connections open through the proxy now (each one a pooled database connection). */
    open(): number {
      return clients.size;
    },
    freeze(): void {
      frozen = true;
      for (const socket of sockets) socket.pause();
    },
    thaw(): void {
      frozen = false;
      for (const socket of sockets) socket.resume();
    },
    async close(): Promise<void> {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
