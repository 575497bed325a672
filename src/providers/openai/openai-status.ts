import type { Observation } from "../../core/model.js";
import { isTerminal } from "../../core/states.js";
import { boundedResult } from "../bounded-result.js";
import { fromUnixSeconds, latest, objectOf, textOf } from "../json-fields.js";
import { mapState, polledObservation } from "../state-map.js";
import { observedIfSame, type StatusClient } from "../status-client.js";
import type { ObserveObject } from "../thin-webhook.js";
import { batchesOnly, compatBatchObservation, compatBatchPath, type OpenAICompat } from "./openai-compat.js";
import {
  OPENAI_BATCH_STATES,
  OPENAI_RESPONSE_STATES,
  type OpenAIKind,
  openaiKindOf,
} from "./openai-states.js";

/**
 * Reads a background response (`GET /responses/{id}`) or a batch (`GET /batches/{id}`), paths
 * relative to the base URL `https://api.openai.com/v1` as in the official SDK.
 */
export function createOpenAIObserver(
  provider: string,
  client: StatusClient,
  compat: OpenAICompat = "openai",
): ObserveObject {
  return async (ref, signal) => {
    if (compat === "together" || compat === "mistral") {
      const answer = await client.get(compatBatchPath(compat, ref.id), signal);
      if (answer.kind !== "answer") return answer;
      const batch = objectOf(answer.body);
      return observedIfSame(ref.id, batch.id, () => compatBatchObservation(provider, compat, batch));
    }
    const kind = batchesOnly(compat) ? "batch" : openaiKindOf(ref.id, ref.kind);
    if (kind === null) {
      return {
        kind: "failed",
        error: `cannot tell whether "${ref.id}" is a response or a batch: set its kind`,
      };
    }
    const answer = await client.get(
      `/${kind === "response" ? "responses" : "batches"}/${encodeURIComponent(ref.id)}`,
      signal,
    );
    if (answer.kind !== "answer") return answer;
    const object = objectOf(answer.body);
    return observedIfSame(ref.id, object.id, () => openaiObservation(provider, kind, object));
  };
}

/** One response or batch object as an observation. */
export function openaiObservation(
  provider: string,
  kind: OpenAIKind,
  object: Record<string, unknown>,
): Observation {
  const raw = textOf(object.status) ?? "(no status)";
  const table = kind === "response" ? OPENAI_RESPONSE_STATES : OPENAI_BATCH_STATES;
  const state = mapState(table, raw);
  const updateTime = kind === "response" ? responseTime(object) : batchTime(object);
  const observation = polledObservation(provider, object.id, state, raw, kind, updateTime);
  if (!isTerminal(state)) return observation;
  return { ...observation, ...(kind === "response" ? responseOutcome(object, raw) : batchOutcome(object)) };
}

function responseTime(response: Record<string, unknown>): number | undefined {
  return latest(fromUnixSeconds(response.created_at), fromUnixSeconds(response.completed_at));
}

function batchTime(batch: Record<string, unknown>): number | undefined {
  const fields = ["created_at", "in_progress_at", "finalizing_at", "completed_at", "failed_at"] as const;
  const more = ["expired_at", "cancelling_at", "cancelled_at"] as const;
  return latest(...[...fields, ...more].map((field) => fromUnixSeconds(batch[field])));
}

/** The response as its result (output, usage), its error or incompleteness as the error. */
function responseOutcome(
  response: Record<string, unknown>,
  raw: string,
): Pick<Observation, "result" | "error"> {
  const result = boundedResult(
    {
      id: response.id,
      status: raw,
      model: response.model ?? null,
      output: response.output ?? [],
      usage: response.usage ?? null,
      incomplete_details: response.incomplete_details ?? null,
    },
    () => ({ id: response.id, status: raw, model: response.model ?? null, usage: response.usage ?? null }),
  );
  if (raw === "incomplete") {
    const reason = objectOf(response.incomplete_details).reason ?? null;
    return { result, error: { code: "incomplete", reason } };
  }
  return response.error ? { result, error: response.error } : { result };
}

/** The batch's files and counts as its result; validation errors as its error. */
function batchOutcome(batch: Record<string, unknown>): Pick<Observation, "result" | "error"> {
  const result = {
    id: batch.id,
    status: batch.status,
    endpoint: batch.endpoint ?? null,
    output_file_id: batch.output_file_id ?? null,
    error_file_id: batch.error_file_id ?? null,
    request_counts: batch.request_counts ?? null,
  };
  const errors = objectOf(batch.errors).data;
  return Array.isArray(errors) && errors.length > 0
    ? { result, error: boundedResult({ errors }, () => ({ errors: errors.slice(0, 10) })) }
    : { result };
}
