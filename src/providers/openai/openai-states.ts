import type { StateTable } from "../state-map.js";
import type { EventMeaning } from "../thin-webhook.js";

/**
 * OpenAI background response `status`.
 * Source: openai-node src/resources/responses/responses.ts (`ResponseStatus`), and
 * https://developers.openai.com/docs/guides/background ("keep polling while queued or in_progress").
 *
 * | status      | canonical |
 * |-------------|-----------|
 * | queued      | pending   |
 * | in_progress | running   |
 * | completed   | succeeded |
 * | failed      | failed    |
 * | cancelled   | cancelled |
 * | incomplete  | failed    |
 *
 * `incomplete` → failed: the response did end, but cut short (`incomplete_details.reason` is
 * `max_output_tokens` or `content_filter`), so what the caller asked for is not there. The partial
 * output is kept on the job's result and the reason is its error, so an application that can use
 * a truncated answer still has it; it is never reported as a success.
 */
export const OPENAI_RESPONSE_STATES: StateTable = {
  queued: "pending",
  in_progress: "running",
  completed: "succeeded",
  failed: "failed",
  cancelled: "cancelled",
  incomplete: "failed",
};

/**
 * OpenAI batch `status`.
 * Source: openai-node src/resources/batches.ts (`Batch.status`); https://platform.openai.com/docs/api-reference/batch/object
 *
 * | status      | canonical | note |
 * |-------------|-----------|------|
 * | validating  | pending   | input file being validated |
 * | in_progress | running   | |
 * | finalizing  | running   | results being prepared |
 * | cancelling  | running   | until `cancelled` (up to 10 min) |
 * | completed   | succeeded | failed requests, if any, are in `error_file_id` |
 * | failed      | failed    | validation failed (`errors`) |
 * | expired     | expired   | not done within the completion window |
 * | cancelled   | cancelled | |
 */
export const OPENAI_BATCH_STATES: StateTable = {
  validating: "pending",
  in_progress: "running",
  finalizing: "running",
  cancelling: "running",
  completed: "succeeded",
  failed: "failed",
  expired: "expired",
  cancelled: "cancelled",
};

export type OpenAIKind = "response" | "batch";

/**
 * OpenAI webhook event types for the objects Finality tracks. Payloads are thin (`data.id` only).
 * Source: openai-node src/resources/webhooks/webhooks.ts (`UnwrapWebhookEvent`);
 * https://developers.openai.com/api/docs/guides/webhooks. Every other type (fine_tuning.*, eval.*,
 * realtime.*, ...) is recorded under its own name as an unknown state and changes nothing.
 */
export const OPENAI_WEBHOOK_EVENTS: Readonly<Record<string, EventMeaning<OpenAIKind>>> = {
  "response.completed": { kind: "response", state: "succeeded", fetch: true },
  "response.failed": { kind: "response", state: "failed", fetch: true },
  "response.incomplete": { kind: "response", state: "failed", fetch: true },
  "response.cancelled": { kind: "response", state: "cancelled", fetch: false },
  "batch.completed": { kind: "batch", state: "succeeded", fetch: true },
  "batch.failed": { kind: "batch", state: "failed", fetch: true },
  // A cancelled or expired batch keeps the results of the requests it finished in its output
  // file (OpenAI's Batch guide): fetched, so that the job carries output_file_id and counts.
  "batch.cancelled": { kind: "batch", state: "cancelled", fetch: true },
  "batch.expired": { kind: "batch", state: "expired", fetch: true },
};

/** The object kind: from the id's prefix (`resp_`, `batch_`), else from the job's `kind`. */
export function openaiKindOf(id: string, kind: string | null): OpenAIKind | null {
  if (id.startsWith("resp_")) return "response";
  if (id.startsWith("batch_")) return "batch";
  if (kind === "response" || kind === "batch") return kind;
  return null;
}
