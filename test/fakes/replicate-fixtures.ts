/**
 * Real-shaped Replicate predictions, one per documented status. Field names follow
 * replicate-javascript index.d.ts (`Prediction`) and https://replicate.com/docs/topics/webhooks/receive-webhook
 * (the webhook body is the prediction itself); see docs/providers-research.md §5.
 */

export const PREDICTION_STATUSES = [
  "starting",
  "processing",
  "succeeded",
  "failed",
  "canceled",
  "aborted",
] as const;

export function prediction(
  id: string,
  status: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const started = !["starting", "aborted"].includes(status);
  const done = ["succeeded", "failed", "canceled", "aborted"].includes(status);
  return {
    id,
    model: "replicate/hello-world",
    version: "5c7d5dc6dd8bf75c1acaa8565735e7986bc5b66206b55cca93cb72c9bf15ccaa",
    input: { text: "Alice" },
    logs: started ? "Using seed: 42\n" : null,
    output: status === "succeeded" ? "hello Alice" : null,
    data_removed: false,
    error: status === "failed" ? "CUDA out of memory" : null,
    status,
    source: "api",
    created_at: "2022-04-26T22:13:06.224088Z",
    started_at: started ? "2022-04-26T22:13:07.111111Z" : null,
    completed_at: done ? "2022-04-26T22:13:09.222222Z" : null,
    urls: {
      get: `https://api.replicate.com/v1/predictions/${id}`,
      cancel: `https://api.replicate.com/v1/predictions/${id}/cancel`,
      web: `https://replicate.com/p/${id}`,
    },
    metrics: done && started ? { predict_time: 1.9, total_time: 3.0 } : {},
    webhook: "https://example.invalid/webhooks/replicate",
    webhook_events_filter: ["start", "output", "logs", "completed"],
    ...extra,
  };
}
