import { toError } from "../core/errors.js";
import type { Observation } from "../core/model.js";
import { redactCredentials } from "../core/url-redaction.js";
import { type PollResult, pollFailure, unreachable } from "../engine/poller.js";
import { activeSpan } from "../engine/tracing.js";
import type { ProviderHealth } from "./provider-health.js";

/** A provider answered 2xx with a JSON body. */
export interface StatusAnswer {
  kind: "answer";
  body: unknown;
}

/** The non-answers, as the reconciler classifies them. */
export type StatusFailure = Exclude<PollResult, { kind: "observed" }>;

export interface StatusClient {
  /**
   * GET `{baseUrl}{path}` with the provider's credentials. `path` is built by the adapter from a
   * job id, each segment URL-encoded; never a URL taken from a webhook body.
   */
  get(
    path: string,
    signal: AbortSignal,
    query?: string,
    extraHeaders?: Record<string, string>,
  ): Promise<StatusAnswer | StatusFailure>;
}

interface StatusClientOptions {
  provider: string;
  baseUrl: string;
  /** Credentials and version headers, sent on every call. */
  headers: Record<string, string>;
  health: ProviderHealth;
  /**
   * Headers made for each request (an AWS signature, a short-lived OAuth token), beside `headers`.
   * A `refused` answer (a token endpoint that turned the key down) is reported like a 401; a throw
   * (the token endpoint unreachable) fails the poll as retryable.
   */
  authorize?: (
    request: { url: URL; headers: Record<string, string> },
    signal: AbortSignal,
  ) => Promise<Authorized>;
  /** What the provider calls its credential, in the refusal message (default "API key"). */
  credential?: string;
}

/** Headers to add to one request, or why there are none. */
export type Authorized =
  | { kind: "headers"; headers: Record<string, string> }
  | { kind: "refused"; status: number; message: string };

const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

/**
 * The only door from an adapter to a provider's API. It keeps the API key where it belongs:
 * requests go to the configured origin only (a path that would leave it is refused) and redirects
 * are not followed (fetch would carry `x-api-key`-style headers to wherever a 3xx points). It
 * classifies answers the way the reconciler expects: 404 not-found, 429/5xx/timeouts retryable
 * with Retry-After, and a 401/403 reported once per provider as a configuration error.
 */
export function createStatusClient(options: StatusClientOptions): StatusClient {
  const base = new URL(options.baseUrl);
  const prefix = options.baseUrl.replace(/\/+$/, "");
  const headers = { accept: "application/json", ...options.headers };
  return {
    async get(path, signal, query, extraHeaders) {
      const pollSpan = activeSpan();
      const url = new URL(`${prefix}${path}${query ? `?${query}` : ""}`);
      if (url.origin !== base.origin || !url.pathname.startsWith(base.pathname.replace(/\/+$/, ""))) {
        return { kind: "failed", error: `refusing to call ${url.origin}${url.pathname}: outside ${prefix}` };
      }
      let sent = extraHeaders === undefined ? headers : { ...headers, ...extraHeaders };
      if (options.authorize !== undefined) {
        let authorized: Authorized;
        try {
          authorized = await options.authorize({ url, headers: sent }, signal);
        } catch (error) {
          return {
            kind: "failed",
            error: `${options.provider}: no credentials for GET ${redactCredentials(url)}: ${causeOf(error)}`,
          };
        }
        if (authorized.kind === "refused") {
          const message = `${options.provider}: ${authorized.message}`;
          options.health.authRefused(options.provider, authorized.status, message);
          return { kind: "failed", error: message, status: authorized.status };
        }
        sent = { ...sent, ...authorized.headers };
      }
      let response: Response;
      try {
        response = await fetch(url, {
          headers: sent,
          signal,
          redirect: "manual",
        });
      } catch (error) {
        return unreachable(url, error);
      }
      const shown = redactCredentials(url);
      // On the reconcile poll's span (when tracing is on): the status of the provider's answer.
      pollSpan?.setAttribute("http.response.status_code", response.status);
      if (response.status === 401 || response.status === 403) {
        await response.body?.cancel();
        const message = `${options.provider}: the status API refused the ${options.credential ?? "API key"} (${response.status})`;
        options.health.authRefused(options.provider, response.status, message);
        return { kind: "failed", error: `${message}: GET ${shown}`, status: response.status, url: shown };
      }
      options.health.authAccepted(options.provider);
      if (response.status < 200 || response.status > 299) {
        await response.body?.cancel();
        // pollFailure never answers "observed".
        return pollFailure(response.status, response.headers.get("retry-after"), url) as StatusFailure;
      }
      const answer = await readJson(response);
      return answer.kind === "failed"
        ? { ...answer, error: `GET ${shown}: ${answer.error}`, status: response.status, url: shown }
        : answer;
    },
  };
}

async function readJson(response: Response): Promise<StatusAnswer | StatusFailure> {
  const declared = Number(response.headers.get("content-length") ?? "0");
  if (declared > MAX_ANSWER_BYTES) {
    await response.body?.cancel();
    return { kind: "failed", error: `status API answer of ${declared} bytes is too large` };
  }
  try {
    const text = await response.text();
    if (text.length > MAX_ANSWER_BYTES) return { kind: "failed", error: "status API answer is too large" };
    return { kind: "answer", body: JSON.parse(text) };
  } catch (error) {
    return { kind: "failed", error: `status API answer is not JSON: ${causeOf(error)}` };
  }
}

function causeOf(error: unknown): string {
  const base = toError(error);
  const cause = base.cause instanceof Error ? `: ${base.cause.message}` : "";
  return `${base.name === "TimeoutError" ? "timed out" : base.message}${cause}`;
}

/** Each segment URL-encoded; `/` kept between them (Gemini names are paths: `batches/abc`). */
export function encodePath(name: string): string | null {
  const segments = name.split("/");
  if (segments.some((segment) => segment === "" || segment === "." || segment === "..")) return null;
  return segments.map(encodeURIComponent).join("/");
}

/**
 * The poll result of an object the status API answered: `read`'s observation of it, or a failure
 * when the answer names another object than the one asked for (a wrong base URL, a proxy's
 * cache): taking it would give this job another job's state.
 */
export function observedIfSame(asked: string, answered: unknown, read: () => Observation): PollResult {
  if (answered !== asked) return { kind: "failed", error: `status API answered for "${String(answered)}"` };
  return { kind: "observed", observation: read() };
}
