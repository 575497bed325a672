/**
 * Real-shaped Gemini API objects: google.longrunning.Operation for long-running operations and
 * batches (a batch's `metadata` is the GenerateContentBatch, with `state`), Vertex-style jobs with
 * a top-level `JOB_STATE_*`, and interactions. Field names follow js-genai (`Operation`,
 * `batchJobFromMldev`, `Interaction`) and https://ai.google.dev/api/batch-api; see
 * docs/providers-research.md §4.
 */

export const BATCH_STATES = ["PENDING", "RUNNING", "SUCCEEDED", "FAILED", "CANCELLED", "EXPIRED"] as const;
export const VERTEX_ONLY_STATES = [
  "QUEUED",
  "CANCELLING",
  "PAUSED",
  "UPDATING",
  "PARTIALLY_SUCCEEDED",
] as const;
export const INTERACTION_STATUSES = [
  "queued",
  "in_progress",
  "requires_continuation",
  "requires_action",
  "completed",
  "failed",
  "budget_exceeded",
  "cancelled",
  "incomplete",
] as const;

const TERMINAL = ["SUCCEEDED", "FAILED", "CANCELLED", "EXPIRED", "PARTIALLY_SUCCEEDED"];

/** A batch as `GET /v1beta/batches/{id}` answers it (the Gemini API: `metadata.state`, BATCH_STATE_*). */
export function geminiBatch(name: string, state: string): Record<string, unknown> {
  const done = TERMINAL.includes(state.replace(/^(BATCH|JOB)_STATE_/, ""));
  const succeeded = state.endsWith("SUCCEEDED");
  return {
    name,
    metadata: {
      "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch",
      name,
      model: "models/gemini-2.5-flash-lite",
      displayName: "capitals-batch",
      createTime: "2025-12-03T17:23:06.004734302Z",
      updateTime: done ? "2025-12-03T17:24:41.850709659Z" : "2025-12-03T17:23:30.000000000Z",
      ...(done ? { endTime: "2025-12-03T17:24:41.850709659Z" } : {}),
      batchStats: {
        requestCount: "3",
        successfulRequestCount: succeeded ? "3" : "0",
        pendingRequestCount: done ? "0" : "3",
      },
      state,
      ...(succeeded ? { output: { responsesFile: "files/batch-abc" } } : {}),
    },
    ...(done ? { done: true } : {}),
    ...(succeeded
      ? {
          response: {
            "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatchOutput",
            responsesFile: "files/batch-abc",
          },
        }
      : {}),
    ...(state.endsWith("FAILED") && !succeeded
      ? { error: { code: 13, message: "Internal error", details: [] } }
      : {}),
  };
}

/** A Vertex-style batch prediction job: `state` at the top, JOB_STATE_*. */
export function vertexJob(name: string, state: string): Record<string, unknown> {
  return {
    name,
    displayName: "vertex-batch",
    state,
    createTime: "2025-12-03T17:23:06Z",
    updateTime: "2025-12-03T17:24:41Z",
  };
}

export const VIDEO_OPERATION = "models/veo-3.0-generate-001/operations/abc123";

/** A long-running operation: running, done with a response, or done with an error. */
export function geminiOperation(
  name: string,
  outcome: "running" | "response" | "error" | "cancelled",
): Record<string, unknown> {
  const metadata = {
    "@type": "type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningMetadata",
  };
  if (outcome === "running") return { name, done: false, metadata };
  if (outcome === "error")
    return { name, done: true, metadata, error: { code: 3, message: "Invalid prompt", details: [] } };
  if (outcome === "cancelled")
    return { name, done: true, metadata, error: { code: 1, message: "Operation cancelled", details: [] } };
  return {
    name,
    done: true,
    metadata,
    response: {
      "@type": "type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse",
      generateVideoResponse: {
        generatedSamples: [
          { video: { uri: "https://generativelanguage.googleapis.com/v1beta/files/x:download?alt=media" } },
        ],
      },
    },
  };
}

export function geminiInteraction(id: string, status: string): Record<string, unknown> {
  return {
    id,
    object: "interaction",
    model: "gemini-3-flash-preview",
    status,
    created: "2026-06-22T10:00:00Z",
    updated: "2026-06-22T10:00:30Z",
    ...(status === "completed"
      ? { outputs: [{ type: "text", text: "Paris" }], usage: { total_tokens: 42 } }
      : {}),
    ...(status === "failed" ? { errors: [{ code: "INTERNAL", message: "model error" }] } : {}),
  };
}

/** A webhook body: `{type, version, timestamp, data: {id, ...}}`, thin. */
export function geminiEvent(type: string, data: Record<string, unknown>): Record<string, unknown> {
  return { type, version: "v1", timestamp: new Date().toISOString(), data };
}
