import fc from "fast-check";
import type { CanonicalState } from "../../../src/core/states.js";
import { type AnswerSource, type DrawnAnswer, statusFrom } from "./drawn-answer.js";
import { count, objectOf, optional, rfc3339, someText, unknownStatus } from "./schema-times.js";

// GetModelInvocationJob's answer (API reference, and the SDKs' GetModelInvocationJobResponse):
// `jobArn`, `modelId`, `roleArn`, `status`, `submitTime`, `inputDataConfig`, `outputDataConfig`
// required; `jobName`, `message`, `lastModifiedTime`, `endTime`, `jobExpirationTime`,
// `timeoutDurationInHours`, `clientRequestToken`, `vpcConfig` and the record counts optional.
// restJson1 timestamps: ISO 8601 date-time texts. Meanings from the `statusEquals` descriptions.

const OPEN: Record<string, CanonicalState> = {
  Submitted: "pending",
  Validating: "pending",
  Scheduled: "pending",
  InProgress: "running",
  // A stop was asked; the job has not ended yet.
  Stopping: "running",
};
const ENDED: Record<string, CanonicalState> = {
  Completed: "succeeded",
  // Not every record was processed in time: it ended, with output.
  PartiallyCompleted: "succeeded",
  Failed: "failed",
  Stopped: "cancelled",
  // Scheduled, but not started before its timeout.
  Expired: "expired",
};

function job(id: string, status: string) {
  return fc
    .record({
      jobName: optional(fc.stringMatching(/^[a-zA-Z0-9]{1,20}$/)),
      clientRequestToken: optional(fc.stringMatching(/^[a-zA-Z0-9]{1,20}$/)),
      message: optional(someText),
      submitTime: rfc3339,
      lastModifiedTime: optional(rfc3339),
      endTime: optional(rfc3339),
      jobExpirationTime: optional(rfc3339),
      timeoutDurationInHours: optional(fc.integer({ min: 24, max: 168 })),
      totalRecordCount: optional(count),
      processedRecordCount: optional(count),
      successRecordCount: optional(count),
      errorRecordCount: optional(count),
    })
    .map((fields) =>
      objectOf({
        jobArn: id,
        modelId: "anthropic.claude-3-haiku-20240307-v1:0",
        roleArn: "arn:aws:iam::123456789012:role/BedrockBatch",
        status,
        inputDataConfig: { s3InputDataConfig: { s3Uri: "s3://in/" } },
        outputDataConfig: { s3OutputDataConfig: { s3Uri: "s3://out/" } },
        ...fields,
      }),
    );
}

const drawn = (id: string, table: Record<string, CanonicalState>): fc.Arbitrary<DrawnAnswer> =>
  statusFrom(table).chain(({ status, expected }) => job(id, status).map((body) => ({ body, expected })));

/** Model invocation job answers (polls; Bedrock sends no webhooks). */
export const bedrockJobs: AnswerSource = {
  open: (id) =>
    fc.oneof(
      drawn(id, OPEN),
      unknownStatus([...Object.keys(OPEN), ...Object.keys(ENDED)]).chain((status) =>
        job(id, status).map((body) => ({ body, expected: null })),
      ),
    ),
  ended: (id) => drawn(id, ENDED),
};
