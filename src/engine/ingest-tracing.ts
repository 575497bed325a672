import type { Job, JobKey } from "../core/model.js";
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
      if (span !== undefined && typeof result === "object" && result !== null) {
        // The ingest outcome, or a reconcile poll's record of it ({ job, effectsFired }).
        const r = result as Partial<IngestOutcome> & { job?: Job | null; effectsFired?: boolean };
        if (r.applied !== undefined) span.setAttribute("finality.applied", r.applied);
        if (r.reason != null) span.setAttribute("finality.reason", r.reason);
        if (r.job != null) span.setAttribute("finality.job.state", r.job.state);
        if (r.effects !== undefined) span.setAttribute("finality.effects.enqueued", r.effects.length);
        if (r.effectsFired !== undefined) span.setAttribute("finality.effects.fired", r.effectsFired);
      }
      return result;
    },
  );
}
