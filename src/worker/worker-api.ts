/** The worker API over HTTP, as the worker client uses it. Web-standard fetch only. */

/** A claimed run, as the handler receives it. */
export interface ClaimedRun {
  id: string;
  kind: string;
  input: unknown;
  attemptCount: number;
  maxAttempts: number;
  attempt: { id: string; generation: number; leaseExpiresAt: string; leaseSeconds: number };
}

export type CallResult<T> =
  | { kind: "ok"; value: T }
  /** 409: the attempt is no longer this worker's; stop working on it. */
  | { kind: "stale"; reason: string }
  /** Network error, 5xx, 429: worth trying again. */
  | { kind: "retry"; error: Error }
  /** Any other 4xx: a bug or a configuration error; trying again will not help. */
  | { kind: "refused"; error: Error };

export interface WorkerApiOptions {
  baseUrl: string;
  token?: string | undefined;
  fetch?: typeof fetch | undefined;
  /**
   * Longest wait for one answer (default 10 s; a claim waits its `waitSeconds` more): a call that
   * hangs on a half-open connection must not stop the heartbeats that keep the lease.
   */
  requestTimeoutMs?: number | undefined;
}

export interface WorkerApi {
  claim(
    workerId: string,
    body: { kinds?: readonly string[]; waitSeconds: number; leaseSeconds: number },
    signal: AbortSignal,
  ): Promise<CallResult<ClaimedRun | null>>;
  heartbeat(attemptId: string, generation: number): Promise<CallResult<{ cancelRequested: boolean }>>;
  event(attemptId: string, body: Record<string, unknown>): Promise<CallResult<{ outcome: string }>>;
}

export function createWorkerApi(options: WorkerApiOptions): WorkerApi {
  const base = options.baseUrl.replace(/\/+$/, "");
  const doFetch = options.fetch ?? fetch;
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;

  const requestTimeoutMs = options.requestTimeoutMs ?? 10_000;

  async function post<T>(
    path: string,
    body: unknown,
    signal?: AbortSignal,
    extraWaitMs = 0,
  ): Promise<CallResult<T | null>> {
    let payload: string;
    try {
      payload = JSON.stringify(body);
    } catch (error) {
      // A value JSON cannot hold (a BigInt, a cycle): sending it again will not help.
      return {
        kind: "refused",
        error: new Error(`${path}: the body is not JSON: ${(error as Error).message}`),
      };
    }
    const timeout = AbortSignal.timeout(requestTimeoutMs + extraWaitMs);
    let response: Response;
    let text: string;
    try {
      response = await doFetch(`${base}${path}`, {
        method: "POST",
        headers,
        body: payload,
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
      if (response.status === 204) return { kind: "ok", value: null };
      text = await response.text();
    } catch (error) {
      return { kind: "retry", error: unreachable(`${base}${path}`, error) };
    }
    if (response.ok) {
      try {
        return { kind: "ok", value: JSON.parse(text) as T };
      } catch {
        // A proxy's page, a cut connection: like a network error, worth another try.
        return { kind: "retry", error: new Error(`${path}: ${response.status} answer is not JSON`) };
      }
    }
    const problem = parseProblem(text);
    if (response.status === 409)
      return { kind: "stale", reason: problem.reason ?? problem.detail ?? "stale" };
    const error = new Error(
      `POST ${base}${path}: ${response.status} ${problem.detail ?? text.slice(0, 200)}`,
    );
    return response.status >= 500 || response.status === 429
      ? { kind: "retry", error }
      : { kind: "refused", error };
  }

  return {
    async claim(workerId, body, signal) {
      const result = await post<{ run: Omit<ClaimedRun, "attempt">; attempt: ClaimedRun["attempt"] }>(
        `/v1/workers/${encodeURIComponent(workerId)}/claim`,
        body,
        signal,
        body.waitSeconds * 1000,
      );
      if (result.kind !== "ok") return result;
      if (result.value === null) return { kind: "ok", value: null };
      const { run, attempt } = result.value;
      return {
        kind: "ok",
        value: {
          id: run.id,
          kind: run.kind,
          input: run.input,
          attemptCount: run.attemptCount,
          maxAttempts: run.maxAttempts,
          attempt,
        },
      };
    },
    async heartbeat(attemptId, generation) {
      const result = await post<{ cancelRequested: boolean }>(
        `/v1/attempts/${encodeURIComponent(attemptId)}/heartbeat`,
        { generation },
      );
      return result.kind === "ok"
        ? { kind: "ok", value: result.value ?? { cancelRequested: false } }
        : result;
    },
    async event(attemptId, body) {
      const result = await post<{ outcome: string }>(
        `/v1/attempts/${encodeURIComponent(attemptId)}/events`,
        body,
      );
      return result.kind === "ok" ? { kind: "ok", value: result.value ?? { outcome: "applied" } } : result;
    },
  };
}

function parseProblem(text: string): { detail?: string; reason?: string } {
  try {
    const value = JSON.parse(text) as { detail?: unknown; reason?: unknown };
    return {
      ...(typeof value.detail === "string" ? { detail: value.detail } : {}),
      ...(typeof value.reason === "string" ? { reason: value.reason } : {}),
    };
  } catch {
    return {};
  }
}

/**
 * fetch says only "fetch failed": the URL and the system error's code (ECONNREFUSED, …) from
 * the cause chain are what tell a reader that the server is down or the address is wrong.
 */
function unreachable(url: string, error: unknown): Error {
  let code: string | undefined;
  let message = String(error);
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    message = current.message;
    if (current.name === "TimeoutError") code ??= "ETIMEDOUT";
    const own = (current as { code?: unknown }).code;
    if (typeof own === "string" && own !== "") code ??= own;
    current = current.cause;
  }
  const detail =
    code !== undefined && message.includes(code) ? message : [code, message].filter(Boolean).join(": ");
  return new Error(`POST ${url}: unreachable: ${detail}`, { cause: error });
}
