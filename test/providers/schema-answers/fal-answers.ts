import fc from "fast-check";
import type { CanonicalState } from "../../../src/core/states.js";
import type { AnswerSource, DrawnAnswer } from "./drawn-answer.js";
import { maybe, objectOf, optional, rfc3339, someText, unknownStatus } from "./schema-times.js";

// A fal queue status as `GET {queue}/{owner}/{alias}/requests/{id}/status` answers it
// (@fal-ai/client `QueueStatus`: InQueue {queue_position}, InProgress {logs}, Completed {logs,
// metrics}; a request error adds `error` and `error_type`, docs "Request Error Types"). A COMPLETED
// request without `error` is read through the result endpoint, which the test answers with a
// drawn output (`falOutputs`).

const OPEN: Record<string, CanonicalState> = { IN_QUEUE: "pending", IN_PROGRESS: "running" };
const ERROR_TYPES = ["request_timeout", "startup_timeout", "runner_disconnected", "internal_error"];

const log = fc.record({ message: someText, level: fc.constantFrom("INFO", "ERROR"), timestamp: rfc3339 });

function status(id: string, name: string, extra: fc.Arbitrary<Record<string, unknown>> = fc.constant({})) {
  return fc
    .record({
      queue_position: optional(fc.nat({ max: 500 })),
      logs: maybe(fc.array(log, { maxLength: 2 })),
      extra,
    })
    .map(({ extra: more, ...fields }) =>
      objectOf({
        status: name,
        request_id: id,
        response_url: `https://queue.fal.run/fal-ai/flux/requests/${id}`,
        status_url: `https://queue.fal.run/fal-ai/flux/requests/${id}/status`,
        cancel_url: `https://queue.fal.run/fal-ai/flux/requests/${id}/cancel`,
        ...fields,
        ...more,
      }),
    );
}

const completed = (id: string): fc.Arbitrary<DrawnAnswer> =>
  fc.oneof(
    status(
      id,
      "COMPLETED",
      fc.record({ metrics: fc.record({ inference_time: fc.double({ min: 0, max: 600, noNaN: true }) }) }),
    ).map((body) => ({ body, expected: "succeeded" as const })),
    status(
      id,
      "COMPLETED",
      fc.record({
        error: fc.string({ minLength: 1, maxLength: 40 }),
        error_type: fc.constantFrom(...ERROR_TYPES),
      }),
    ).map((body) => ({ body, expected: "failed" as const })),
  );

/** Status answers (polls). */
export const falStatuses: AnswerSource = {
  open: (id) =>
    fc.oneof(
      fc
        .constantFrom(...Object.entries(OPEN))
        .chain(([name, expected]) => status(id, name).map((body) => ({ body, expected }))),
      unknownStatus([...Object.keys(OPEN), "COMPLETED"]).chain((name) =>
        status(id, name).map((body) => ({ body, expected: null })),
      ),
    ),
  ended: completed,
};

/** A model's output, as the result endpoint and an OK webhook's `payload` carry it. */
export const falOutputs: fc.Arbitrary<Record<string, unknown>> = fc
  .record({
    images: fc.array(
      fc.record({
        url: fc.webUrl(),
        content_type: fc.constantFrom("image/png", "image/jpeg"),
        width: optional(fc.nat({ max: 4096 })),
      }),
      { maxLength: 3 },
    ),
    seed: fc.nat(),
    has_nsfw_concepts: optional(fc.array(fc.boolean(), { maxLength: 3 })),
  })
  .map((fields) => objectOf(fields));

/** A webhook body (fal sends one, when the request is done): OK with a payload, or ERROR. */
export function falWebhookBody(id: string): fc.Arbitrary<DrawnAnswer> {
  return fc.oneof(
    falOutputs.map((payload) => ({
      body: { request_id: id, gateway_request_id: id, status: "OK", payload },
      expected: "succeeded" as const,
    })),
    fc
      .record({
        error: fc.string({ minLength: 1, maxLength: 40 }),
        payload: maybe(fc.record({ detail: someText })),
      })
      .map((fields) => ({
        body: objectOf({ request_id: id, gateway_request_id: id, status: "ERROR", ...fields }),
        expected: "failed" as const,
      })),
    // A status fal does not document is recorded, never applied.
    unknownStatus(["OK", "ERROR"]).map((name) => ({
      body: { request_id: id, gateway_request_id: id, status: name, payload: null },
      expected: null,
    })),
  );
}
