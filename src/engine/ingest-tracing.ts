import type { JobKey } from "../core/model.js";
import type { IngestOutcome } from "./ingest.js";
import { inSpan, tracingOn } from "./tracing.js";

/**
 * The ingest transaction as a span. The ingest context must be made inside `work` (by
 * `contextFor`), so the effects it enqueues store this span as the one that settled the job.
 */
export function traceIngest<T>(key: JobKey & { source: string }, work: () => Promise<T>): Promise<T> {
  if (!tracingOn()) return work();
  return inSpan(
    "ingest",
    {
      attributes: {
        "db.operation.name": "transaction",
        "finality.provider": key.provider,
        "finality.job.id": key.id,
        "finality.source": key.source,
      },
    },
    async (span) => {
      const result = await work();
      if (span !== undefined && isOutcome(result)) {
        span.setAttribute("finality.applied", result.applied);
        if (result.reason !== null) span.setAttribute("finality.reason", result.reason);
        if (result.job !== null) span.setAttribute("finality.job.state", result.job.state);
        span.setAttribute("finality.effects.enqueued", result.effects.length);
      }
      return result;
    },
  );
}

function isOutcome(value: unknown): value is IngestOutcome {
  return typeof value === "object" && value !== null && "applied" in value && "effects" in value;
}
