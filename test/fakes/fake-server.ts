import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One request the fake answered, for tests that check what an adapter or SDK sent. */
export interface SeenRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage["headers"];
}

export interface FakeAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** Answers one request; null means 404 in the provider's own error shape. */
export type FakeRoute = (request: SeenRequest) => FakeAnswer | null;

/**
 * The common part of the provider fakes: a real HTTP server on 127.0.0.1 (never another address),
 * a log of what it was asked, an auth check, and failures on demand (status + Retry-After) so that
 * tests can drive the adapters' polling etiquette. Each provider fake adds its routes and formats.
 */
export class FakeServer {
  readonly seen: SeenRequest[] = [];
  /** When set, the next `count` requests get this answer instead (e.g. 429, 503, 401). */
  failNext: { status: number; count: number; retryAfter?: string; body?: unknown } | null = null;
  private server: Server | null = null;

  constructor(
    private readonly route: FakeRoute,
    private readonly authorized: (request: SeenRequest) => FakeAnswer | null,
    private readonly notFound: (request: SeenRequest) => unknown,
  ) {}

  async listen(): Promise<string> {
    this.server = createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    return this.url;
  }

  get url(): string {
    const address = this.server?.address() as AddressInfo | null;
    if (!address) throw new Error("the fake is not listening");
    return `http://127.0.0.1:${address.port}`;
  }

  /** Requests for paths that start with `prefix` (e.g. `/v1/batches/`). */
  requestsTo(prefix: string): SeenRequest[] {
    return this.seen.filter((request) => request.path.startsWith(prefix));
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? "/", "http://fake.invalid");
    const request: SeenRequest = {
      method: req.method ?? "GET",
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
    };
    this.seen.push(request);
    req.resume();
    const failure = this.failNext;
    if (failure !== null && failure.count > 0) {
      failure.count--;
      if (failure.count === 0) this.failNext = null;
      const headers: Record<string, string> = failure.retryAfter ? { "retry-after": failure.retryAfter } : {};
      send(res, { status: failure.status, body: failure.body ?? { error: "failing on purpose" }, headers });
      return;
    }
    const refused = this.authorized(request);
    if (refused !== null) {
      send(res, refused);
      return;
    }
    const answer = this.route(request);
    send(res, answer ?? { status: 404, body: this.notFound(request) });
  }
}

/**
 * A body sent as this exact JSON text, for what JSON.stringify cannot write (nesting thousands of
 * levels deep). Give it the fields the fake's routes look at (`id`, `object`, ...) with
 * `Object.assign`; only `text` is sent.
 */
export class RawJson {
  constructor(readonly text: string) {}
}

function send(res: ServerResponse, answer: FakeAnswer): void {
  res.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
  res.end(answer.body instanceof RawJson ? answer.body.text : JSON.stringify(answer.body));
}

/** The header's value, joined when repeated. */
export function header(request: SeenRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(", ") : value;
}
