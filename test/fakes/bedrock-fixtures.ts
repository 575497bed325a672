/**
 * Model invocation jobs as GetModelInvocationJob answers them
 * (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_GetModelInvocationJob.html):
 * restJson1, so timestamps are ISO 8601 texts.
 */
export const BEDROCK_STATUSES = [
  "Submitted",
  "Validating",
  "Scheduled",
  "InProgress",
  "Stopping",
  "Stopped",
  "PartiallyCompleted",
  "Completed",
  "Failed",
  "Expired",
] as const;

export const ACCOUNT = "123456789012";

export function jobArn(id: string, region = "us-east-1"): string {
  return `arn:aws:bedrock:${region}:${ACCOUNT}:model-invocation-job/${id}`;
}

export function bedrockJob(
  id: string,
  status: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const submitTime = "2026-11-30T10:00:00.000Z";
  const ended = ["Completed", "PartiallyCompleted", "Failed", "Stopped", "Expired"].includes(status);
  return {
    jobArn: jobArn(id),
    jobName: `nightly-eval-${id}`,
    modelId: "anthropic.claude-3-haiku-20240307-v1:0",
    clientRequestToken: `req-${id}`,
    roleArn: `arn:aws:iam::${ACCOUNT}:role/BedrockBatchRole`,
    status,
    ...(status === "Failed" ? { message: "Access denied to the S3 input location" } : {}),
    submitTime,
    lastModifiedTime: "2026-11-30T10:05:00.000Z",
    ...(ended ? { endTime: "2026-11-30T11:00:00.000Z" } : {}),
    inputDataConfig: { s3InputDataConfig: { s3Uri: "s3://evals/input/", s3InputFormat: "JSONL" } },
    outputDataConfig: { s3OutputDataConfig: { s3Uri: `s3://evals/output/${id}/` } },
    timeoutDurationInHours: 24,
    jobExpirationTime: "2026-12-01T10:00:00.000Z",
    ...(status === "Completed" || status === "PartiallyCompleted"
      ? {
          totalRecordCount: 1000,
          processedRecordCount: status === "Completed" ? 1000 : 800,
          successRecordCount: status === "Completed" ? 998 : 790,
          errorRecordCount: status === "Completed" ? 2 : 10,
        }
      : {}),
    ...extra,
  };
}
