import type { Job } from "../core/model.js";
import type { PollResult } from "./poller.js";
import { inSpan, SpanKind, tracingOn } from "./tracing.js";

/** One reconcile poll of one job: the provider call and the transaction that records it, as children. */
export function traceReconcile(job: Job, work: () => Promise<void>): Promise<void> {
  if (!tracingOn()) return work();
  return inSpan(
    `reconcile ${job.provider}`,
    {
      attributes: {
        "finality.provider": job.provider,
        "finality.job.id": job.id,
        "finality.source": "reconcile",
      },
    },
    work,
  );
}

/**
 * The call to the provider's status API, with the answer's HTTP status where the poller gives
 * one (a failed poll carries it; an observed state is a 2xx).
 */
export function tracePoll(job: Job, work: () => Promise<PollResult>): Promise<PollResult> {
  if (!tracingOn()) return work();
  return inSpan(
    `poll ${job.provider}`,
    { kind: SpanKind.CLIENT, attributes: { "finality.provider": job.provider, "finality.job.id": job.id } },
    async (span) => {
      const result = await work();
      span?.setAttribute("finality.poll.result", result.kind);
      if (result.kind === "failed" && result.status !== undefined)
        span?.setAttribute("http.response.status_code", result.status);
      if (result.kind === "not-found") span?.setAttribute("http.response.status_code", 404);
      if (result.kind === "failed") span?.setAttribute("error.type", result.code ?? "poll-failed");
      return result;
    },
  );
}
