import type { StateTable } from "../state-map.js";

/**
 * fal queue request `status`, from `GET {queue}/{owner}/{alias}/requests/{id}/status`.
 * Sources: https://docs.fal.ai/documentation/model-apis/inference/queue ("Request Lifecycle") and
 * @fal-ai/client `QueueStatus` (https://docs.fal.ai/reference/client-libraries/javascript/types.common).
 *
 * | status      | canonical | note |
 * |-------------|-----------|------|
 * | IN_QUEUE    | pending   | stored, waiting for a runner (`queue_position`) |
 * | IN_PROGRESS | running   | routed to a runner |
 * | COMPLETED   | (result)  | done, success or not: the result endpoint or `error` says which |
 *
 * COMPLETED is not in the table: it covers a failed request too, so the poller reads the status's
 * `error` and then the result endpoint before it says succeeded or failed (fal-status.ts).
 */
export const FAL_QUEUE_STATES: StateTable = {
  IN_QUEUE: "pending",
  IN_PROGRESS: "running",
};

/**
 * fal webhook `status`: `OK` with the result as `payload`, or `ERROR` with `error` (a message)
 * and the error details as `payload`.
 * Source: https://docs.fal.ai/model-apis/model-endpoints/webhooks ("Successful result", "Response errors").
 */
export const FAL_WEBHOOK_STATES: StateTable = {
  OK: "succeeded",
  ERROR: "failed",
};

/**
 * The queue path of an endpoint id: `owner/alias`, its sub-path dropped, as fal's clients build
 * status and result URLs (`fal-ai/flux/dev` is polled at `fal-ai/flux/requests/{id}`). Null for
 * an id with fewer than two segments.
 */
export function falQueueApp(endpointId: string): string | null {
  const segments = endpointId.split("/");
  if (
    segments.length < 2 ||
    segments.some((segment) => segment === "" || segment === "." || segment === "..")
  )
    return null;
  return segments.slice(0, 2).map(encodeURIComponent).join("/");
}

/** The endpoint a job is polled at: its kind when that names one, else the configured `app`. */
export function falEndpointOf(kind: string | null, app: string | undefined): string | null {
  if (kind !== null && falQueueApp(kind) !== null) return kind;
  return app ?? null;
}
