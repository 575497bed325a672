/**
 * The client's HTTP on Node: node:http over a keep-alive agent. fetch costs a worker ~3× the CPU
 * per call on Node 20 (undici's streams, headers and AbortSignal machinery; bench/README.md,
 * "Runs: the worker client on node:http"), and a worker makes one call per run. The modules are
 * imported when first needed, by a specifier bundlers leave alone, so that runtimes without them
 * (browsers, Workers) never load them: they use fetch, as do Deno and Bun (their node:http is a
 * layer of their own, not what was measured).
 */

/** One request: what the client sends. */
interface SendRequest {
  method: string;
  headers: Record<string, string>;
  body?: string | undefined;
  signal?: AbortSignal | undefined;
  timeoutMs: number;
}

/** One answer: its status and its body's text (empty for a 204). */
interface SendAnswer {
  status: number;
  text: string;
}

export type Send = (url: string, request: SendRequest) => Promise<SendAnswer>;

/** Whether this runtime is Node itself: Deno, Bun, Cloudflare Workers and browsers use fetch. */
export function hasNodeHttp(): boolean {
  const runtime = globalThis as {
    process?: { versions?: { node?: unknown; bun?: unknown } };
    navigator?: { userAgent?: unknown };
    Deno?: unknown;
  };
  return (
    typeof runtime.process?.versions?.node === "string" &&
    runtime.process.versions.bun === undefined &&
    runtime.Deno === undefined &&
    runtime.navigator?.userAgent !== "Cloudflare-Workers"
  );
}

/** A timed-out call's error: `code` is what the client's message names (as fetch's TimeoutError was). */
class TimeoutError extends Error {
  override readonly name = "TimeoutError";
  readonly code = "ETIMEDOUT";
}

/** A call given up because its caller's signal aborted; `reason` is the signal's. */
function abortError(reason: unknown): Error {
  return Object.assign(new Error("the call was aborted", { cause: reason }), {
    name: "AbortError",
    code: "ABORT_ERR",
  });
}

/**
 * One abort listener per caller's signal, whatever the number of its calls in flight: a worker's
 * claims share its stop signal, and a listener per call would pass EventTarget's leak warning at
 * 11 (fetch's AbortSignal.any adds none). Returns what takes `cancel` off again.
 */
const cancelsOf = new WeakMap<AbortSignal, Set<(reason: unknown) => void>>();
function onAbort(signal: AbortSignal, cancel: (reason: unknown) => void): () => void {
  let cancels = cancelsOf.get(signal);
  if (cancels === undefined) {
    const all = new Set<(reason: unknown) => void>();
    cancels = all;
    cancelsOf.set(signal, all);
    signal.addEventListener("abort", () => {
      for (const each of all) each(signal.reason);
      all.clear();
    });
  }
  cancels.add(cancel);
  return () => cancels.delete(cancel);
}

/**
 * A Send over node:http and node:https, their keep-alive agents shared by every client of the
 * process (a client made per call must not leave a connection open per client). Loaded on its
 * first call; where the import fails, every call goes through `fallback` (fetch) instead.
 */
export function nodeSend(fallback: () => Send): Send {
  return (url, request) => {
    shared ??= loadNodeSend().catch(() => fallback());
    return shared.then((send) => send(url, request));
  };
}
let shared: Promise<Send> | undefined;

// A specifier bundlers do not resolve: esbuild and webpack fail on a literal "node:http" when they
// build the client for a browser or a Worker, where it is never imported.
const importBuiltin = (name: string): Promise<unknown> =>
  import(/* webpackIgnore: true */ /* @vite-ignore */ name);

/** What every call says of itself; some firewalls refuse a request without a user agent. */
const OWN_HEADERS = { "user-agent": "finality-client", accept: "application/json" };

/**
 * How long an idle connection is kept (undici's 4 s): a proxy or load balancer in front of the
 * server may close idle connections without saying when, and a call sent on one it just closed
 * fails with ECONNRESET. Node's agent keeps idle sockets for ever without a `timeout`, and then
 * ignores the server's own Keep-Alive hint.
 */
const IDLE_SOCKET_MS = 4_000;

async function loadNodeSend(): Promise<Send> {
  const [http, https] = (await Promise.all([importBuiltin("node:http"), importBuiltin("node:https")])) as [
    typeof import("node:http"),
    typeof import("node:https"),
  ];
  const agents = {
    "http:": { module: http, agent: new http.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS }) },
    "https:": { module: https, agent: new https.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS }) },
  };
  const decoder = new TextDecoder(); // as fetch's text(): UTF-8, a byte-order mark dropped
  return (url, request) =>
    new Promise<SendAnswer>((resolve, reject) => {
      const { signal } = request;
      if (signal?.aborted) {
        reject(abortError(signal.reason));
        return;
      }
      const target = new URL(url);
      const via = agents[target.protocol as keyof typeof agents];
      if (via === undefined) {
        reject(new TypeError(`${target.protocol} is not http: or https:`));
        return;
      }
      const headers = {
        ...OWN_HEADERS,
        ...request.headers,
        ...(request.body === undefined ? {} : { "content-length": String(Buffer.byteLength(request.body)) }),
      };
      const outgoing = via.module.request(
        target,
        { method: request.method, headers, agent: via.agent },
        (incoming) => {
          // An answer before the whole body went out (a 413, a 401 on a large report): the server
          // closes that connection, and the rest of the write fails with EPIPE. Pooled, the socket
          // would emit that error with no listener left, which ends the process.
          if (!outgoing.writableFinished) outgoing.shouldKeepAlive = false;
          const chunks: Buffer[] = [];
          incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
          incoming.on("error", fail);
          incoming.on("end", () => {
            done();
            resolve({ status: incoming.statusCode ?? 0, text: decoder.decode(Buffer.concat(chunks)) });
          });
        },
      );
      // One timer for the whole call, connection to last byte, as AbortSignal.timeout was for fetch.
      const timer = setTimeout(
        () => outgoing.destroy(new TimeoutError(`no answer within ${request.timeoutMs} ms`)),
        request.timeoutMs,
      );
      const release = signal ? onAbort(signal, (reason) => outgoing.destroy(abortError(reason))) : null;
      function done(): void {
        clearTimeout(timer);
        release?.();
      }
      function fail(error: Error): void {
        done();
        reject(error);
      }
      outgoing.on("error", fail);
      outgoing.end(request.body);
    });
}
