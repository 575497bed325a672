import fc from "fast-check";
import type { CanonicalState } from "../../../src/core/states.js";
import { type AnswerSource, type DrawnAnswer, statusFrom } from "./drawn-answer.js";
import {
  count,
  maybe,
  objectOf,
  optional,
  someText,
  unixSeconds,
  unixSecondsNumber,
  unknownStatus,
} from "./schema-times.js";

// From OpenAI's OpenAPI document (components.schemas `Response`, `Batch`, `BatchError`,
// `BatchRequestCounts`, `ResponseError`, `ResponseErrorCode`) and the background-mode and Batch
// guides for what each status means.

const RESPONSE_OPEN: Record<string, CanonicalState> = { queued: "pending", in_progress: "running" };
const RESPONSE_ENDED: Record<string, CanonicalState> = {
  completed: "succeeded",
  failed: "failed",
  cancelled: "cancelled",
  // Ended, but cut short (max_output_tokens, content_filter): not what was asked for.
  incomplete: "failed",
};
const BATCH_OPEN: Record<string, CanonicalState> = {
  validating: "pending",
  in_progress: "running",
  finalizing: "running",
  cancelling: "running",
};
const BATCH_ENDED: Record<string, CanonicalState> = {
  completed: "succeeded",
  failed: "failed",
  expired: "expired",
  cancelled: "cancelled",
};

const ERROR_CODES = [
  "server_error",
  "rate_limit_exceeded",
  "invalid_prompt",
  "vector_store_timeout",
] as const;
const responseError = fc.record({ code: fc.constantFrom(...ERROR_CODES), message: someText });

/** `OutputMessage` with `OutputTextContent`. */
const outputMessage = fc.record({
  type: fc.constant("message"),
  id: someText,
  role: fc.constant("assistant"),
  status: fc.constantFrom("in_progress", "completed", "incomplete"),
  content: fc.array(
    fc.record({
      type: fc.constant("output_text"),
      text: someText,
      annotations: fc.constant([]),
      logprobs: fc.constant([]),
    }),
    { maxLength: 2 },
  ),
});

/** `ResponseUsage`. */
const usage = fc.record({
  input_tokens: count,
  input_tokens_details: fc.record({ cached_tokens: count, cache_write_tokens: count }),
  output_tokens: count,
  output_tokens_details: fc.record({ reasoning_tokens: count }),
  total_tokens: count,
});

/** `Response`: required fields always there; `status`, `completed_at`, `usage`... drawn. */
function response(id: string, status: fc.Arbitrary<string | typeof ABSENT_STATUS>) {
  return fc
    .record({
      status,
      created_at: unixSecondsNumber,
      completed_at: maybe(unixSecondsNumber),
      error: fc.oneof(fc.constant(null), responseError),
      incomplete_details: fc.oneof(
        fc.constant(null),
        fc.record({ reason: optional(fc.constantFrom("max_output_tokens", "content_filter")) }),
      ),
      model: fc.constantFrom("gpt-5", "o3-deep-research", ""),
      output: fc.array(outputMessage, { maxLength: 2 }),
      usage: optional(usage),
      metadata: fc.oneof(fc.constant(null), fc.dictionary(someText, someText, { maxKeys: 2 })),
      temperature: fc.oneof(fc.constant(null), fc.double({ min: 0, max: 2, noNaN: true })),
      top_p: fc.oneof(fc.constant(null), fc.double({ min: 0, max: 1, noNaN: true })),
    })
    .map((fields) =>
      objectOf({
        id,
        object: "response",
        instructions: null,
        tools: [],
        tool_choice: "auto",
        parallel_tool_calls: true,
        ...fields,
        status: fields.status === ABSENT_STATUS ? undefined : fields.status,
      }),
    );
}

/** `status` is optional in `Response`: an answer without one says nothing about the state. */
const ABSENT_STATUS = Symbol("no status");

/** A `Batch` object as `GET /batches/{id}` answers it, its status drawn from `status`. */
export function openaiBatch(id: string, status: fc.Arbitrary<string>) {
  // Optional integers in the schema (never null): present or left out.
  const time = optional(unixSeconds);
  return fc
    .record({
      status,
      created_at: unixSeconds,
      in_progress_at: time,
      expires_at: time,
      finalizing_at: time,
      completed_at: time,
      failed_at: time,
      expired_at: time,
      cancelling_at: time,
      cancelled_at: time,
      output_file_id: optional(someText),
      error_file_id: optional(someText),
      request_counts: optional(fc.record({ total: count, completed: count, failed: count })),
      errors: optional(
        fc.record({
          object: fc.constant("list"),
          data: fc.array(
            fc.record({
              code: someText,
              message: someText,
              param: fc.oneof(fc.constant(null), someText),
              line: fc.oneof(fc.constant(null), fc.integer()),
            }),
            { maxLength: 3 },
          ),
        }),
      ),
      metadata: maybe(fc.dictionary(someText, someText, { maxKeys: 2 })),
    })
    .map((fields) =>
      objectOf({
        id,
        object: "batch",
        endpoint: "/v1/responses",
        input_file_id: "file-abc",
        completion_window: "24h",
        ...fields,
      }),
    );
}

function answers(
  objects: fc.Arbitrary<Record<string, unknown>>,
  expected: CanonicalState | null,
): fc.Arbitrary<DrawnAnswer> {
  return objects.map((body) => ({ body: stripUndefined(body), expected }));
}

function stripUndefined(body: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined));
}

const known = (...tables: Record<string, CanonicalState>[]) => tables.flatMap(Object.keys);

function sourceOf(
  build: (id: string, status: fc.Arbitrary<string>) => fc.Arbitrary<Record<string, unknown>>,
  open: Record<string, CanonicalState>,
  ended: Record<string, CanonicalState>,
  extraUnknown: (id: string) => fc.Arbitrary<DrawnAnswer>[] = () => [],
): AnswerSource {
  return {
    open: (id) =>
      fc.oneof(
        statusFrom(open).chain(({ status, expected }) => answers(build(id, fc.constant(status)), expected)),
        answers(build(id, unknownStatus(known(open, ended))), null),
        ...extraUnknown(id),
      ),
    ended: (id) =>
      statusFrom(ended).chain(({ status, expected }) => answers(build(id, fc.constant(status)), expected)),
  };
}

/** `GET /responses/{id}` answers for a background response (`resp_` ids). */
export const openaiResponses: AnswerSource = sourceOf(response, RESPONSE_OPEN, RESPONSE_ENDED, (id) => [
  answers(response(id, fc.constant(ABSENT_STATUS)), null),
]);

/** `GET /batches/{id}` answers (`batch_` ids). */
export const openaiBatches: AnswerSource = sourceOf(openaiBatch, BATCH_OPEN, BATCH_ENDED);
