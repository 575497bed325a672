import { contextFromTraceParent, inSpan, SpanKind } from "../engine/tracing.js";
import { toProblem } from "./problem.js";

/** The webhook intake's route: here, below webhook-routes.ts, which imports this file for its spans. */
export const WEBHOOK_ROUTE = "/webhooks/:provider";

/**
 * A webhook's intake as the root span of the completion's trace (or a child of the sender's
 * `traceparent`): its children are `verify`, the `ingest` transaction and `answer`. The
 * request's log fields (delivery id, job id, outcome) become its attributes once it is answered.
 *
 * `traceParent` is the sender's only once the request is verified (see `continueVerifiedTrace`):
 * anyone can send the header, and a span under it is kept or dropped by the caller's choice.
 */
export function traceWebhook<T>(
  provider: string,
  traceParent: string | undefined,
  log: Record<string, unknown>,
  statusOf: () => number,
  work: () => Promise<T>,
): Promise<T> {
  const parent = contextFromTraceParent(traceParent);
  return inSpan(
    "receive webhook",
    {
      kind: SpanKind.SERVER,
      ...(parent ? { parent } : {}),
      attributes: {
        "http.request.method": "POST",
        "http.route": WEBHOOK_ROUTE,
        "messaging.system": "finality",
        "messaging.operation.type": "receive",
        "messaging.destination.name": provider,
        "finality.provider": provider,
      },
    },
    async (span) => {
      let status: number | undefined;
      try {
        return await work();
      } catch (error) {
        // Thrown out of the span (a verified sender's trace, below): answered with the error's status.
        status = toProblem(error).problem.status;
        throw error;
      } finally {
        span?.setAttribute("http.response.status_code", status ?? statusOf());
        if (typeof log.deliveryId === "string") span?.setAttribute("messaging.message.id", log.deliveryId);
        if (typeof log.jobId === "string") span?.setAttribute("finality.job.id", log.jobId);
        if (typeof log.outcome === "string") span?.setAttribute("finality.outcome", log.outcome);
      }
    },
  );
}

/**
 * The intake's hook for a sender whose `traceparent` is trusted (`telemetry.trustIncomingTraceparent`):
 * nothing is traced until the signature is verified, and only then does the rest of the intake
 * (parse, ingest) run in a `receive webhook` span under the sender's trace. An unsigned request
 * therefore never makes a span in a caller's trace, nor forces one to be sampled.
 */
export function continueVerifiedTrace(
  provider: string,
  traceParent: string,
  log: Record<string, unknown>,
): <T>(rest: () => Promise<T>) => Promise<T> {
  return (rest) => traceWebhook(provider, traceParent, log, () => 200, rest);
}
