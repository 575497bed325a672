import type { Problem } from "./client-types.js";
import { hasNodeHttp, nodeSend, type Send } from "./node-send.js";

/**
 * One HTTP call of the client: node:http where the runtime has it (Node, Deno, Bun), fetch
 * elsewhere (Workers, browsers) or when the caller gives one, JSON in and out, every failure a
 * FinalityClientError that says what the caller should do next.
 */

/** How a call failed. */
export type ClientErrorKind =
  /** No answer: connection refused, reset, timed out. Worth another try. */
  | "unreachable"
  /** An answer that is not a 2xx: `status` and, when the server sent one, `problem`. */
  | "http"
  /** A 2xx whose body is not JSON (a proxy's page, a cut connection). Worth another try. */
  | "not-json"
  /** The request's body cannot be JSON (a BigInt, a cycle). Sending it again will not help. */
  | "body-not-json"
  /** `waitForJob`: the job did not settle within the caller's `timeoutMs`. */
  | "wait-timeout";

export class FinalityClientError extends Error {
  override readonly name = "FinalityClientError";
  constructor(
    message: string,
    readonly kind: ClientErrorKind,
    /** The HTTP status; 0 when there was no answer. */
    readonly status: number,
    /** The server's `application/problem+json` answer; switch on its `type` or `code`. */
    readonly problem: Problem | null,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** Whether the same call may succeed later: no answer, a 5xx, a 429, or a problem saying so. */
  get retryable(): boolean {
    if (this.kind === "unreachable" || this.kind === "not-json") return true;
    if (this.kind === "body-not-json") return false;
    if (this.kind === "wait-timeout") return true;
    return this.problem?.retryable ?? (this.status >= 500 || this.status === 429);
  }
}

export interface CallOptions {
  baseUrl: string;
  token?: string | undefined;
  /**
   * Sends every call through this fetch (a proxy's, a test's). Without it: node:http with a
   * keep-alive agent where the runtime has it (a third of fetch's CPU per call on Node), else
   * the global fetch.
   */
  fetch?: typeof fetch | undefined;
  /** Longest wait for one answer (default 30 s); a claim's long-poll waits its `waitSeconds` more. */
  timeoutMs?: number | undefined;
}

export interface Call {
  method: "GET" | "POST";
  path: string;
  query?: Record<string, string | number | boolean | undefined> | undefined;
  body?: unknown;
  headers?: Record<string, string> | undefined;
  signal?: AbortSignal | undefined;
  /** Added to the timeout: a long-poll's own wait. */
  extraWaitMs?: number | undefined;
}

type Caller = <T>(call: Call) => Promise<{ status: number; body: T | null }>;

/** Builds the function every client method sends its request through. */
export function createCaller(options: CallOptions): Caller {
  const base = options.baseUrl.replace(/\/+$/, "");
  const send =
    options.fetch !== undefined
      ? fetchSend(options.fetch)
      : hasNodeHttp()
        ? nodeSend(() => fetchSend(fetch))
        : fetchSend(fetch);
  const timeoutMs = options.timeoutMs ?? 30_000;
  const auth: Record<string, string> =
    options.token === undefined ? {} : { authorization: `Bearer ${options.token}` };

  return async <T>(call: Call) => {
    const url = `${base}${call.path}${queryString(call.query)}`;
    const where = `${call.method} ${url}`;
    let payload: string | undefined;
    try {
      payload = call.body === undefined ? undefined : JSON.stringify(call.body);
    } catch (error) {
      const message = `${call.path}: the body is not JSON: ${(error as Error).message}`;
      throw new FinalityClientError(message, "body-not-json", 0, null, { cause: error });
    }
    let answer: { status: number; text: string };
    try {
      answer = await send(url, {
        method: call.method,
        headers: {
          ...(payload === undefined ? {} : { "content-type": "application/json" }),
          ...auth,
          ...call.headers,
        },
        body: payload,
        signal: call.signal,
        timeoutMs: timeoutMs + (call.extraWaitMs ?? 0),
      });
    } catch (error) {
      throw new FinalityClientError(
        `${where}: unreachable: ${networkDetail(error)}`,
        "unreachable",
        0,
        null,
        {
          cause: error,
        },
      );
    }
    const { status, text } = answer;
    if (status === 204) return { status: 204, body: null };
    if (status >= 200 && status < 300) {
      try {
        return { status, body: JSON.parse(text) as T };
      } catch {
        const message = `${call.path}: ${status} answer is not JSON`;
        throw new FinalityClientError(message, "not-json", status, null);
      }
    }
    const problem = parseProblem(text);
    const message = `${where}: ${status} ${problem?.detail ?? text.slice(0, 200)}`;
    throw new FinalityClientError(message, "http", status, problem);
  };
}

/** A Send over a fetch: the call's timeout as an AbortSignal beside the caller's own. */
function fetchSend(doFetch: typeof fetch): Send {
  return async (url, request) => {
    const timeout = AbortSignal.timeout(request.timeoutMs);
    const response = await doFetch(url, {
      method: request.method,
      headers: request.headers,
      ...(request.body === undefined ? {} : { body: request.body }),
      signal: request.signal ? AbortSignal.any([request.signal, timeout]) : timeout,
    });
    return { status: response.status, text: response.status === 204 ? "" : await response.text() };
  };
}

function queryString(query: Call["query"]): string {
  if (query === undefined) return "";
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) search.set(key, String(value));
  const text = search.toString();
  return text === "" ? "" : `?${text}`;
}

function parseProblem(text: string): Problem | null {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === "object" && value !== null && typeof (value as Problem).type === "string"
      ? (value as Problem)
      : null;
  } catch {
    return null;
  }
}

/**
 * fetch says only "fetch failed": the system error's code (ECONNREFUSED, …) from the cause
 * chain is what tells a reader that the server is down or the address is wrong.
 */
function networkDetail(error: unknown): string {
  let code: string | undefined;
  let message = String(error);
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    message = current.message;
    if (current.name === "TimeoutError") code ??= "ETIMEDOUT";
    const own = (current as { code?: unknown }).code;
    if (typeof own === "string" && own !== "") code ??= own;
    current = current.cause;
  }
  return code !== undefined && message.includes(code) ? message : [code, message].filter(Boolean).join(": ");
}
