import { contextFromTraceParent, inSpan, SpanKind } from "../engine/tracing.js";
import { WEBHOOK_ROUTE } from "./webhook-routes.js";

/**
 * A webhook's intake as the root span of the completion's trace (or a child of the sender's
 * `traceparent`): its children are `verify`, the `ingest` transaction and `answer`. The
 * request's log fields (delivery id, job id, outcome) become its attributes once it is answered.
 */
export function traceWebhook(
  provider: string,
  traceParent: string | undefined,
  log: Record<string, unknown>,
  statusOf: () => number,
  work: () => Promise<void>,
): Promise<void> {
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
      try {
        await work();
      } finally {
        span?.setAttribute("http.response.status_code", statusOf());
        if (typeof log.deliveryId === "string") span?.setAttribute("messaging.message.id", log.deliveryId);
        if (typeof log.jobId === "string") span?.setAttribute("finality.job.id", log.jobId);
        if (typeof log.outcome === "string") span?.setAttribute("finality.outcome", log.outcome);
      }
    },
  );
}
