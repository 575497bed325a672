/**
 * Real-shaped OpenAI objects, one per documented state. Field names and types follow openai-node
 * src/resources/responses/responses.ts (`Response`), src/resources/batches.ts (`Batch`) and
 * src/resources/webhooks/webhooks.ts (event envelopes); see docs/providers-research.md §2.
 */

export const RESPONSE_STATUSES = [
  "queued",
  "in_progress",
  "completed",
  "failed",
  "cancelled",
  "incomplete",
] as const;
export const BATCH_STATUSES = [
  "validating",
  "in_progress",
  "finalizing",
  "completed",
  "failed",
  "expired",
  "cancelling",
  "cancelled",
] as const;

const CREATED = 1756644282;

export function openaiResponse(id: string, status: string): Record<string, unknown> {
  const done = !["queued", "in_progress"].includes(status);
  return {
    id,
    object: "response",
    created_at: CREATED,
    status,
    background: true,
    error: status === "failed" ? { code: "server_error", message: "The model failed to respond." } : null,
    incomplete_details: status === "incomplete" ? { reason: "max_output_tokens" } : null,
    instructions: null,
    max_output_tokens: status === "incomplete" ? 16 : null,
    model: "gpt-5.2",
    output:
      status === "completed" || status === "incomplete"
        ? [
            {
              type: "message",
              id: "msg_68af4030592c81938ec0a5fbab4a3e9f",
              status: status === "completed" ? "completed" : "incomplete",
              role: "assistant",
              content: [{ type: "output_text", text: "hello", annotations: [], logprobs: [] }],
            },
          ]
        : [],
    parallel_tool_calls: true,
    previous_response_id: null,
    temperature: 1,
    tool_choice: "auto",
    tools: [],
    top_p: 1,
    usage: done ? { input_tokens: 12, output_tokens: 5, total_tokens: 17 } : null,
    metadata: {},
    completed_at: status === "completed" ? CREATED + 18 : null,
  };
}

export function openaiBatch(id: string, status: string): Record<string, unknown> {
  const at = (field: string, when: number, states: string[]) =>
    states.includes(status) ? { [field]: when } : {};
  return {
    id,
    object: "batch",
    endpoint: "/v1/responses",
    errors:
      status === "failed"
        ? { object: "list", data: [{ code: "invalid_json_line", line: 1, message: "bad line", param: null }] }
        : null,
    input_file_id: "file-abc123",
    completion_window: "24h",
    status,
    // A cancelled or expired batch keeps the output of the requests it finished (Batch guide).
    output_file_id: ["completed", "expired", "cancelled"].includes(status) ? "file-out456" : null,
    error_file_id: status === "completed" ? "file-err789" : null,
    created_at: CREATED,
    ...at("in_progress_at", CREATED + 10, [
      "in_progress",
      "finalizing",
      "completed",
      "cancelling",
      "cancelled",
    ]),
    ...at("finalizing_at", CREATED + 100, ["finalizing", "completed"]),
    ...at("completed_at", CREATED + 120, ["completed"]),
    ...at("failed_at", CREATED + 5, ["failed"]),
    ...at("expired_at", CREATED + 86_400, ["expired"]),
    ...at("cancelling_at", CREATED + 50, ["cancelling", "cancelled"]),
    ...at("cancelled_at", CREATED + 60, ["cancelled"]),
    expires_at: CREATED + 86_400,
    request_counts: {
      total: 100,
      completed: status === "completed" ? 95 : 0,
      failed: status === "completed" ? 5 : 0,
    },
    metadata: { customer_id: "user_123456789" },
  };
}

/** A webhook event envelope: thin, the object's id only. */
export function openaiEvent(
  type: string,
  objectId: string,
  createdAt = CREATED + 200,
): Record<string, unknown> {
  return {
    id: `evt_${objectId.replace(/[^a-z0-9]/gi, "")}${type.replace(/\W/g, "")}`,
    object: "event",
    created_at: createdAt,
    type,
    data: { id: objectId },
  };
}
