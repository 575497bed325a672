import type { Observation } from "../../core/model.js";
import type { PollResult } from "../../engine/poller.js";
import { boundedResult } from "../bounded-result.js";
import { objectOf, textOf } from "../json-fields.js";
import { mapState, polledObservation } from "../state-map.js";
import type { StatusClient } from "../status-client.js";
import { FAL_QUEUE_STATES, falEndpointOf, falQueueApp } from "./fal-states.js";

/**
 * Polls one fal queue request: its status, then, once COMPLETED, its result. The status answer
 * carries no request id to compare with the one asked for (unlike the other providers' objects),
 * so the path alone names the request.
 */
export function createFalPoller(
  provider: string,
  client: StatusClient,
  app: string | undefined,
): (ref: { id: string; kind: string | null }, signal: AbortSignal) => Promise<PollResult> {
  return async (ref, signal) => {
    const endpoint = falEndpointOf(ref.kind, app);
    const queueApp = endpoint === null ? null : falQueueApp(endpoint);
    if (endpoint === null || queueApp === null)
      return { kind: "failed", error: `no fal endpoint for "${ref.id}": set its kind or the provider's app` };
    const path = `/${queueApp}/requests/${encodeURIComponent(ref.id)}`;
    const answer = await client.get(`${path}/status`, signal);
    if (answer.kind !== "answer") return answer;
    const status = objectOf(answer.body);
    const raw = textOf(status.status) ?? "(no status)";
    const base = (state: string) => polledObservation(provider, ref.id, state, raw, endpoint, undefined);
    if (raw !== "COMPLETED") return { kind: "observed", observation: base(mapState(FAL_QUEUE_STATES, raw)) };
    // A request that failed after its retries is COMPLETED too; fal then gives `error` (and an
    // `error_type` such as request_timeout: https://docs.fal.ai/documentation/model-apis/request-errors).
    if (status.error !== undefined && status.error !== null) {
      const failed = base("failed");
      failed.error = { message: status.error, error_type: status.error_type ?? null };
      return { kind: "observed", observation: failed };
    }
    const result = await client.get(path, signal);
    if (result.kind === "answer") {
      const done = base("succeeded");
      done.result = falResult(ref.id, result.body);
      return { kind: "observed", observation: done };
    }
    // The result endpoint answers a failed request with the request's own error status: a 4xx
    // (422 validation, a content filter) is the request's failure. 401/403/404/429 and 5xx are
    // about this call, not the request: retried like any failed poll.
    if (result.kind === "failed" && isRequestFailure(result.status)) {
      const failed = base("failed");
      failed.error = { message: `the result endpoint answered ${result.status}`, status: result.status };
      return { kind: "observed", observation: failed };
    }
    return result;
  };
}

function isRequestFailure(status: number | undefined): boolean {
  return status !== undefined && status >= 400 && status < 500 && ![401, 403, 404, 408, 429].includes(status);
}

/** The model's output as the job's result; too large: its top-level keys and the marker. */
function falResult(id: string, payload: unknown): unknown {
  return boundedResult(payload, () => ({
    request_id: id,
    keys: Object.keys(objectOf(payload)).slice(0, 50),
  }));
}

/** A webhook body as an observation: `payload` is the result (OK) or the error's details (ERROR). */
export function falWebhookObservation(
  provider: string,
  body: Record<string, unknown>,
  id: string,
  state: string,
  raw: string,
  kind: string | undefined,
): Observation {
  const observation: Observation = { provider, id, state, rawState: raw, source: "webhook" };
  if (kind !== undefined) observation.kind = kind;
  if (state === "succeeded") {
    observation.result = falResult(id, body.payload ?? null);
  } else if (state === "failed") {
    observation.error = boundedResult(
      {
        message: body.error ?? null,
        payload: body.payload ?? null,
        payload_error: body.payload_error ?? null,
      },
      () => ({ message: body.error ?? null }),
    );
  }
  // fal could not serialise the result: the request succeeded but its output is not here.
  if (state === "succeeded" && body.payload_error !== undefined && body.payload_error !== null)
    observation.error = { payload_error: body.payload_error };
  return observation;
}
