import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import type { Hono } from "hono";
import type { AppEnv } from "./app-env.js";
import { sweepIdleSockets } from "./idle-socket-sweep.js";
import type { NodeRequestHandler } from "./node-webhook-handler.js";

export interface NodeServer {
  /** e.g. http://127.0.0.1:8787 (the real port when 0 was asked for). */
  readonly url: string;
  readonly port: number;
  /**
   * Stops accepting connections and resolves once every in-flight request has been answered.
   * Connections still busy after `timeoutMs` are cut; their requests were never acknowledged.
   */
  close(timeoutMs?: number): Promise<void>;
}

interface NodeServerOptions {
  host: string;
  port: number;
  fastPath?: NodeRequestHandler | undefined;
  /** How long an idle keep-alive connection stays open (`server.keepAliveTimeoutMs`, 65 s). */
  keepAliveTimeoutMs?: number | undefined;
  /** Time to receive a request's headers (`server.headersTimeoutMs`, keep-alive + 1 s). */
  headersTimeoutMs?: number | undefined;
}

/** Above the idle timeouts of common proxies and load balancers (AWS ALB's and nginx's upstream 60 s). */
const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 65_000;
/** The whole request (headers and body) must arrive within this, or the headers timeout if longer. */
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * Serves the app with @hono/node-server on one host and port. `fastPath` may take a request
 * before the app does (the webhook route, see node-webhook-handler.ts).
 */
export async function startNodeServer(app: Hono<AppEnv>, options: NodeServerOptions): Promise<NodeServer> {
  const listener = getRequestListener(app.fetch, { hostname: options.host });
  const fastPath = options.fastPath;
  let stopping = false;
  // Node's close() waits for keep-alive sockets to time out: while stopping, answers say
  // `Connection: close` and each socket that turns idle (its answer sent, even one begun before
  // stopping) is closed at once. One shared listener, added with `on`: a `once` per answer, and a
  // second `request` listener, cost every request.
  const closeIdleConnections = () => server.closeIdleConnections();
  const afterAnswer = () => {
    if (stopping) setImmediate(closeIdleConnections);
  };
  const server = createServer((request, response) => {
    if (stopping) response.shouldKeepAlive = false;
    response.on("finish", afterAnswer);
    if (fastPath?.(request, response)) return;
    void listener(request, response);
  });
  // Slow or idle clients cannot hold sockets for ever. An idle keep-alive connection is closed by
  // the proxy in front (whose idle timeout is shorter), never by the server while the proxy may be
  // sending a request onto it; the headers timeout stays above it, and Node wants the request
  // timeout at least as long as the headers timeout.
  const keepAliveTimeout = options.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS;
  const headersTimeout = options.headersTimeoutMs ?? keepAliveTimeout + 1000;
  server.keepAliveTimeout = keepAliveTimeout;
  server.headersTimeout = headersTimeout;
  server.requestTimeout = Math.max(REQUEST_TIMEOUT_MS, headersTimeout);
  // Node arms a timer per answer for the keep-alive timeout; one sweep does it for every socket.
  sweepIdleSockets(server, Math.min(1000, Math.max(50, keepAliveTimeout / 4)));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  let closing: Promise<void> | null = null;
  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    close(timeoutMs = 10_000) {
      stopping = true;
      closing ??= new Promise<void>((resolve) => {
        const force = setTimeout(() => server.closeAllConnections(), timeoutMs);
        force.unref();
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        // Keep-alive connections with no request in flight would hold close() open until they time out.
        server.closeIdleConnections();
      });
      return closing;
    },
  };
}
