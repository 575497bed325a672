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

  async function post<T>(path: string, body: unknown, signal?: AbortSignal): Promise<CallResult<T | null>> {
    let response: Response;
    try {
      response = await doFetch(`${base}${path}`, {
        method: "POST",
        headers,
        body: JSON.stringify(body),
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      return { kind: "retry", error: error instanceof Error ? error : new Error(String(error)) };
    }
    if (response.status === 204) return { kind: "ok", value: null };
    const text = await response.text().catch(() => "");
    if (response.ok) return { kind: "ok", value: JSON.parse(text) as T };
    const problem = parseProblem(text);
    if (response.status === 409)
      return { kind: "stale", reason: problem.reason ?? problem.detail ?? "stale" };
    const error = new Error(`${path}: ${response.status} ${problem.detail ?? text.slice(0, 200)}`);
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
