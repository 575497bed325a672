import type { Context } from "@opentelemetry/api";
import { inSpan, tracingOn } from "../engine/tracing.js";

/**
 * A worker's callback (progress, success, failure) as a span: the run transition and its
 * mirror job's ingest run under it, so effects the run's end enqueues continue this trace
 * (and the worker's own, when it sent `traceparent`).
 */
export function traceWorkerCallback<T extends { outcome: string }>(
  /** The request's context (request-tracing.ts): the handler runs after awaits. */
  request: unknown,
  attemptId: string,
  type: string,
  work: () => Promise<T>,
): Promise<T> {
  if (!tracingOn()) return work();
  return inSpan(
    "worker callback",
    {
      ...(request ? { parent: request as Context } : {}),
      attributes: {
        "finality.attempt.id": attemptId,
        "finality.worker.event": type,
        "finality.source": "worker",
      },
    },
    async (span) => {
      const result = await work();
      span?.setAttribute("finality.outcome", result.outcome);
      return result;
    },
  );
}
