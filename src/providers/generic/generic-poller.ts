import { toError } from "../../core/errors.js";
import type { Observation } from "../../core/model.js";
import { redactCredentials } from "../../core/url-redaction.js";
import type { Poller, PollResult } from "../../engine/poller.js";
import { pollFailure, unreachable } from "../../engine/poller.js";
import { activeSpan } from "../../engine/tracing.js";
import { fromRfc3339 } from "../json-fields.js";
import type { ProviderHealth } from "../provider-health.js";
import { mapState, type StateTable } from "../state-map.js";
import { parseGenericWebhook } from "./generic-webhook.js";
import { readJsonPath } from "./json-path.js";

/** Where each field sits in the status API's answer (`a.b.0.c`). */
export interface GenericPaths {
  id?: string | undefined;
  state: string;
  seq?: string | undefined;
  updateTime?: string | undefined;
  result?: string | undefined;
  error?: string | undefined;
}

export interface GenericPollOptions {
  /** Status URL with `{id}` where the job id goes (URL-encoded). */
  url: string;
  headers?: Record<string, string>;
  /** Absent: the answer is the generic webhook body, `{jobId, state, seq?, updateTime?, result?, error?}`. */
  paths?: GenericPaths | undefined;
  /** The API's state names → canonical; a name it does not list is kept as is. */
  states?: StateTable | undefined;
  /** Where a refused credential (401/403) is reported, once per provider. */
  health?: ProviderHealth | undefined;
}

/**
 * Polls any HTTP job API. The URL comes from configuration only, never from a webhook body, so a
 * sender cannot point polls elsewhere; redirects are not followed, so the configured headers
 * (often credentials) go to that URL's host only.
 */
export function createGenericPoller(provider: string, options: GenericPollOptions): Poller {
  return async (job, signal) => {
    const pollSpan = activeSpan();
    const url = options.url.replaceAll("{id}", encodeURIComponent(job.id));
    let response: Response;
    let body: Uint8Array;
    try {
      response = await fetch(url, {
        headers: { accept: "application/json", ...options.headers },
        signal,
        redirect: "manual",
      });
      body = new Uint8Array(await response.arrayBuffer());
    } catch (error) {
      return unreachable(url, error);
    }
    const shown = redactCredentials(url);
    // On the reconcile poll's span (when tracing is on): the status of the provider's answer.
    pollSpan?.setAttribute("http.response.status_code", response.status);
    const answered = { status: response.status, url: shown };
    if (response.status === 401 || response.status === 403) {
      const message = `${provider}: the status API refused the configured credentials (${response.status})`;
      options.health?.authRefused(provider, response.status, message);
      return { kind: "failed", error: `${message}: GET ${shown}`, ...answered };
    }
    options.health?.authAccepted(provider);
    if (!response.ok) return pollFailure(response.status, response.headers.get("retry-after"), url);
    try {
      const observation = options.paths
        ? readWithPaths(provider, job.id, body, options.paths)
        : fromGenericBody(provider, body);
      if (observation.id !== job.id) {
        return {
          kind: "failed",
          error: `GET ${shown}: status API answered for job "${observation.id}", not "${job.id}"`,
          ...answered,
        };
      }
      if (options.states) observation.state = mapState(options.states, observation.state);
      return { kind: "observed", observation };
    } catch (error) {
      return {
        kind: "failed",
        error: `GET ${shown}: status API answer: ${toError(error).message}`,
        ...answered,
      } satisfies PollResult;
    }
  };
}

function fromGenericBody(provider: string, body: Uint8Array): Observation {
  const { deliveryId: _ignored, ...observation } = parseGenericWebhook(body, provider, "poll", "keep");
  return { ...observation, source: "reconcile" };
}

function readWithPaths(provider: string, jobId: string, body: Uint8Array, paths: GenericPaths): Observation {
  const answer: unknown = JSON.parse(new TextDecoder().decode(body));
  const state = readJsonPath(answer, paths.state);
  if (typeof state !== "string" || state === "") throw new Error(`no state at "${paths.state}"`);
  const id = paths.id === undefined ? jobId : String(readJsonPath(answer, paths.id));
  const observation: Observation = { provider, id, state, rawState: state, source: "reconcile" };
  const seq = paths.seq === undefined ? undefined : readJsonPath(answer, paths.seq);
  if (typeof seq === "number" && Number.isSafeInteger(seq) && seq >= 0) observation.seq = seq;
  const updateTime =
    paths.updateTime === undefined ? undefined : epochMillis(readJsonPath(answer, paths.updateTime));
  if (updateTime !== undefined) observation.updateTime = updateTime;
  // Taken whole: the ingest path cuts what cannot be stored to a marked stand-in (its size or depth).
  if (paths.result !== undefined) observation.result = readJsonPath(answer, paths.result) ?? null;
  if (paths.error !== undefined) {
    const error = readJsonPath(answer, paths.error);
    if (error !== undefined && error !== null) observation.error = error;
  }
  return observation;
}

/** RFC 3339 text, or a number: seconds below 10^11 (until the year 5138), else milliseconds. */
function epochMillis(value: unknown): number | undefined {
  if (typeof value === "number" && Number.isFinite(value) && value >= 0)
    return value < 1e11 ? value * 1000 : value;
  return fromRfc3339(value);
}
