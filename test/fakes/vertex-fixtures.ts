/**
 * BatchPredictionJob resources as `projects.locations.batchPredictionJobs.get` answers them
 * (https://cloud.google.com/vertex-ai/docs/reference/rest/v1/projects.locations.batchPredictionJobs):
 * proto3 JSON, so int64 counts are texts and empty fields are left out.
 */
export const VERTEX_JOB_STATES = [
  "JOB_STATE_QUEUED",
  "JOB_STATE_PENDING",
  "JOB_STATE_RUNNING",
  "JOB_STATE_SUCCEEDED",
  "JOB_STATE_FAILED",
  "JOB_STATE_CANCELLING",
  "JOB_STATE_CANCELLED",
  "JOB_STATE_PAUSED",
  "JOB_STATE_EXPIRED",
  "JOB_STATE_UPDATING",
  "JOB_STATE_PARTIALLY_SUCCEEDED",
] as const;

export const PROJECT_NUMBER = "123456789012";

export function vertexJobName(id: string, location = "us-central1", project = PROJECT_NUMBER): string {
  return `projects/${project}/locations/${location}/batchPredictionJobs/${id}`;
}

export function vertexJob(
  id: string,
  state: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const ended = [
    "JOB_STATE_SUCCEEDED",
    "JOB_STATE_FAILED",
    "JOB_STATE_CANCELLED",
    "JOB_STATE_EXPIRED",
    "JOB_STATE_PARTIALLY_SUCCEEDED",
  ].includes(state);
  const succeeded = state === "JOB_STATE_SUCCEEDED" || state === "JOB_STATE_PARTIALLY_SUCCEEDED";
  return {
    name: vertexJobName(id),
    displayName: `nightly-eval-${id}`,
    model: "publishers/google/models/gemini-2.0-flash-001",
    inputConfig: { instancesFormat: "jsonl", gcsSource: { uris: ["gs://evals/input.jsonl"] } },
    outputConfig: { predictionsFormat: "jsonl", gcsDestination: { outputUriPrefix: "gs://evals/output" } },
    state,
    createTime: "2026-11-30T10:00:00.000000Z",
    ...(state === "JOB_STATE_QUEUED" || state === "JOB_STATE_PENDING"
      ? {}
      : { startTime: "2026-11-30T10:01:00Z" }),
    ...(ended ? { endTime: "2026-11-30T11:00:00.123456Z" } : {}),
    updateTime: "2026-11-30T11:00:01Z",
    ...(succeeded
      ? {
          outputInfo: { gcsOutputDirectory: `gs://evals/output/prediction-${id}` },
          completionStats: {
            successfulCount: state === "JOB_STATE_SUCCEEDED" ? "1000" : "800",
            ...(state === "JOB_STATE_PARTIALLY_SUCCEEDED" ? { failedCount: "200" } : {}),
          },
        }
      : {}),
    ...(state === "JOB_STATE_FAILED"
      ? { error: { code: 3, message: "Invalid input: the file gs://evals/input.jsonl is not JSON Lines." } }
      : {}),
    ...extra,
  };
}
