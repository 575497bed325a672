import type { StateTable } from "../state-map.js";
import type { EventMeaning } from "../thin-webhook.js";

const JOB_STATES: StateTable = {
  PENDING: "pending",
  QUEUED: "pending",
  RUNNING: "running",
  UPDATING: "running",
  CANCELLING: "running",
  PAUSED: "running",
  SUCCEEDED: "succeeded",
  PARTIALLY_SUCCEEDED: "succeeded",
  FAILED: "failed",
  CANCELLED: "cancelled",
  EXPIRED: "expired",
};

/**
 * Batch job state, under either prefix: `BATCH_STATE_*` as the Gemini API's REST answer has it
 * (`metadata.state`), `JOB_STATE_*` as the SDK (and Vertex, top-level `state`) names it.
 * Source: js-genai src/types.ts (`JobState`) and src/_transformers.ts (`tJobState`);
 * https://ai.google.dev/api/batch-api
 *
 * | state (either prefix) | canonical | note |
 * |-----------------------|-----------|------|
 * | PENDING, QUEUED       | pending   | QUEUED: Vertex only |
 * | RUNNING, UPDATING     | running   | UPDATING: Vertex only, back to RUNNING |
 * | CANCELLING, PAUSED    | running   | Vertex only; PAUSED can be resumed |
 * | SUCCEEDED             | succeeded | |
 * | PARTIALLY_SUCCEEDED   | succeeded | Vertex only; `result.partial` is true |
 * | FAILED                | failed    | |
 * | CANCELLED             | cancelled | |
 * | EXPIRED               | expired   | not run within the batch window |
 * | UNSPECIFIED, others   | unknown   | recorded, never applied |
 */
export const GEMINI_BATCH_STATES: StateTable = Object.fromEntries(
  Object.entries(JOB_STATES).flatMap(([name, state]) => [
    [`BATCH_STATE_${name}`, state],
    [`JOB_STATE_${name}`, state],
  ]),
);

/**
 * Interaction `status` (background interactions).
 * Source: js-genai src/gaos (`Interaction.status`); https://ai.google.dev/gemini-api/docs/interactions
 *
 * | status                | canonical | note |
 * |-----------------------|-----------|------|
 * | queued                | pending   | |
 * | in_progress           | running   | |
 * | requires_continuation | running   | a long decode paused at a checkpoint |
 * | requires_action       | running   | waiting for input: `result.waitingForInput` |
 * | completed             | succeeded | |
 * | failed                | failed    | |
 * | budget_exceeded       | failed    | |
 * | cancelled             | cancelled | |
 * | incomplete            | failed    | as OpenAI's `incomplete`: ended, cut short |
 */
export const GEMINI_INTERACTION_STATES: StateTable = {
  queued: "pending",
  in_progress: "running",
  requires_continuation: "running",
  requires_action: "running",
  completed: "succeeded",
  failed: "failed",
  budget_exceeded: "failed",
  cancelled: "cancelled",
  incomplete: "failed",
};

export type GeminiKind = "batch" | "operation" | "interaction";

/**
 * Gemini webhook event types (thin: `data.id` and a few fields).
 * Source: https://ai.google.dev/gemini-api/docs/webhooks (event table). `batch.cancelled` and
 * `interaction.cancelled` are in the guide but not in the SDK's `WebhookSubscribedEvent`: accepted.
 * Anything else is recorded under its own name as an unknown state.
 */
export const GEMINI_WEBHOOK_EVENTS: Readonly<Record<string, EventMeaning<GeminiKind>>> = {
  "batch.succeeded": { kind: "batch", state: "succeeded", fetch: true },
  "batch.failed": { kind: "batch", state: "failed", fetch: false },
  // Fetched like the others: whatever the batch finished before it stopped stays on the job.
  "batch.cancelled": { kind: "batch", state: "cancelled", fetch: true },
  "batch.expired": { kind: "batch", state: "expired", fetch: true },
  "interaction.completed": { kind: "interaction", state: "succeeded", fetch: true },
  "interaction.failed": { kind: "interaction", state: "failed", fetch: false },
  "interaction.cancelled": { kind: "interaction", state: "cancelled", fetch: false },
  "interaction.requires_action": { kind: "interaction", state: "running", fetch: false },
  "video.generated": { kind: "operation", state: "succeeded", fetch: true },
};

/**
 * The object kind from the name: `batches/...`, `.../operations/...`, `interactions/...`; else the
 * job's `kind` (an interaction id is bare).
 */
export function geminiKindOf(id: string, kind: string | null): GeminiKind | null {
  if (id.startsWith("batches/")) return "batch";
  if (id.startsWith("operations/") || id.includes("/operations/")) return "operation";
  if (id.startsWith("interactions/")) return "interaction";
  if (kind === "batch" || kind === "operation" || kind === "interaction") return kind;
  return null;
}
