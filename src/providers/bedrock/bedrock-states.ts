import type { StateTable } from "../state-map.js";

/**
 * Bedrock batch inference job `status` (`ModelInvocationJobStatus`).
 * Source: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_GetModelInvocationJob.html
 * and the `statusEquals` list of ListModelInvocationJobs
 * (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_ListModelInvocationJobs.html).
 *
 * | status             | canonical | note |
 * |--------------------|-----------|------|
 * | Submitted          | pending   | queued for validation |
 * | Validating         | pending   | its role, files and quotas are checked |
 * | Scheduled          | pending   | validated, waiting for its turn |
 * | InProgress         | running   | output starts to appear in S3 |
 * | Stopping           | running   | a stop was asked; not ended yet |
 * | Completed          | succeeded | |
 * | PartiallyCompleted | succeeded | not every record was processed in time: `result.partial` is true |
 * | Failed             | failed    | `message` says why |
 * | Stopped            | cancelled | stopped by StopModelInvocationJob |
 * | Expired            | expired   | scheduled, but not started before its timeout |
 * | others             | unknown   | recorded, never applied |
 */
export const BEDROCK_JOB_STATES: StateTable = {
  Submitted: "pending",
  Validating: "pending",
  Scheduled: "pending",
  InProgress: "running",
  Stopping: "running",
  Completed: "succeeded",
  PartiallyCompleted: "succeeded",
  Failed: "failed",
  Stopped: "cancelled",
  Expired: "expired",
};

/**
 * A job's ARN, the id Finality keeps it under (what CreateModelInvocationJob answers and the list
 * shows): `arn:{partition}:bedrock:{region}:{account}:model-invocation-job/{id}`.
 */
const JOB_ARN = /^arn:aws[a-z-]*:bedrock:([a-z0-9-]+):[0-9]{12}:model-invocation-job\/[a-z0-9]+$/;

/** The job's region, or null when `id` is not a batch inference job's ARN. */
export function bedrockJobRegion(id: string): string | null {
  return JOB_ARN.exec(id)?.[1] ?? null;
}
