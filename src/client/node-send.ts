/**
 * The client's HTTP on Node (and Deno, Bun): node:http over a keep-alive agent. fetch costs a
 * worker ~3× the CPU per call on Node 20 (undici's streams, headers and AbortSignal machinery;
 * bench/README.md, "Runs: the worker client's HTTP"), and a worker makes one call per run. The
 * modules are imported when first needed, so that runtimes without them (browsers, Workers) never
 * load them; they use fetch.
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

/** Whether this runtime has node:http: Node, Deno and Bun do; Cloudflare Workers and browsers use fetch. */
export function hasNodeHttp(): boolean {
  const runtime = globalThis as {
    process?: { versions?: { node?: unknown } };
    navigator?: { userAgent?: unknown };
  };
  return (
    typeof runtime.process?.versions?.node === "string" &&
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
 * A Send over node:http and node:https, each with its own keep-alive agent (idle sockets do not
 * keep the process alive: the agent unrefs them). Loaded on its first call.
 */
export function nodeSend(): Send {
  let loaded: Promise<Send> | undefined;
  return (url, request) => {
    loaded ??= loadNodeSend();
    return loaded.then((send) => send(url, request));
  };
}

async function loadNodeSend(): Promise<Send> {
  const [http, https] = await Promise.all([import("node:http"), import("node:https")]);
  const agents = {
    "http:": { module: http, agent: new http.Agent({ keepAlive: true }) },
    "https:": { module: https, agent: new https.Agent({ keepAlive: true }) },
  };
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
      const headers =
        request.body === undefined
          ? request.headers
          : { ...request.headers, "content-length": String(Buffer.byteLength(request.body)) };
      const outgoing = via.module.request(
        target,
        { method: request.method, headers, agent: via.agent },
        (incoming) => {
          const chunks: Buffer[] = [];
          incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
          incoming.on("error", fail);
          incoming.on("end", () => {
            done();
            resolve({ status: incoming.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") });
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
