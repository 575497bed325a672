import type { OpenAICompat } from "../../config/provider-config-schema.js";
import type { Observation } from "../../core/model.js";
import { isTerminal } from "../../core/states.js";
import { boundedResult } from "../bounded-result.js";
import { fromRfc3339, fromUnixSeconds, latest, objectOf, textOf } from "../json-fields.js";
import { mapState, polledObservation, type StateTable } from "../state-map.js";

/**
 * Batch APIs that copy OpenAI's, reached through the `openai` adapter with `compat` and `baseUrl`.
 * `groq` is OpenAI's format as is (https://console.groq.com/docs/batch: `/openai/v1/batches`,
 * `batch_` ids, OpenAI's statuses). The two below differ, and are read here:
 */
export type { OpenAICompat } from "../../config/provider-config-schema.js";

/** Whether every id of this flavour is a batch (their ids carry no `batch_` prefix to tell). */
export function batchesOnly(compat: OpenAICompat): boolean {
  return compat === "together" || compat === "mistral";
}

/**
 * Together batch `status`, upper case. Source: https://docs.together.ai/docs/inference/batch/manage
 * ("Check batch status"). A COMPLETED batch may hold failed requests in `error_file_id`.
 */
const TOGETHER_BATCH_STATES: StateTable = {
  VALIDATING: "pending",
  IN_PROGRESS: "running",
  COMPLETED: "succeeded",
  FAILED: "failed",
  EXPIRED: "expired",
  CANCELLED: "cancelled",
};

/**
 * Mistral batch job `status`, `GET /v1/batch/jobs/{job_id}`. Source: Mistral's API reference
 * (`BatchJobStatus`), https://docs.mistral.ai/capabilities/batch/.
 * TIMEOUT_EXCEEDED → expired: its `timeout_hours` window closed before it finished, which is what
 * OpenAI's `expired` means; CANCELLATION_REQUESTED stays running until CANCELLED.
 */
const MISTRAL_BATCH_STATES: StateTable = {
  QUEUED: "pending",
  RUNNING: "running",
  SUCCESS: "succeeded",
  FAILED: "failed",
  TIMEOUT_EXCEEDED: "expired",
  CANCELLATION_REQUESTED: "running",
  CANCELLED: "cancelled",
};

/** The status path of a batch in this flavour, relative to `baseUrl`. */
export function compatBatchPath(compat: OpenAICompat, id: string): string {
  return compat === "mistral"
    ? `/batch/jobs/${encodeURIComponent(id)}`
    : `/batches/${encodeURIComponent(id)}`;
}

/** A Together or Mistral batch as an observation (kind `batch`). */
export function compatBatchObservation(
  provider: string,
  compat: "together" | "mistral",
  batch: Record<string, unknown>,
): Observation {
  const raw = textOf(batch.status) ?? "(no status)";
  const state = mapState(compat === "together" ? TOGETHER_BATCH_STATES : MISTRAL_BATCH_STATES, raw);
  // Together writes times as ISO 8601 texts, Mistral as Unix seconds.
  const time = (value: unknown) => fromUnixSeconds(value) ?? fromRfc3339(value);
  const updateTime = latest(time(batch.created_at), time(batch.started_at), time(batch.completed_at));
  const observation = polledObservation(provider, batch.id, state, raw, "batch", updateTime);
  if (!isTerminal(state)) return observation;
  observation.result =
    compat === "together"
      ? {
          id: batch.id,
          status: raw,
          output_file_id: batch.output_file_id ?? null,
          error_file_id: batch.error_file_id ?? null,
          progress: batch.progress ?? null,
        }
      : {
          id: batch.id,
          status: raw,
          output_file: batch.output_file ?? null,
          error_file: batch.error_file ?? null,
          total_requests: batch.total_requests ?? null,
          succeeded_requests: batch.succeeded_requests ?? null,
          failed_requests: batch.failed_requests ?? null,
        };
  const errors = compat === "mistral" ? batch.errors : batch.error;
  const some = Array.isArray(errors)
    ? errors.length > 0
    : errors !== undefined && errors !== null && errors !== "";
  if (some && state !== "succeeded")
    observation.error = boundedResult({ errors }, () => ({ errors: String(objectOf(errors)).slice(0, 200) }));
  return observation;
}
