import type { Observation } from "../../core/model.js";
import { isTerminal } from "../../core/states.js";
import type { Poller } from "../../engine/poller.js";
import { boundedResult } from "../bounded-result.js";
import { fromRfc3339, latest, objectOf, textOf } from "../json-fields.js";
import { mapState, polledObservation } from "../state-map.js";
import { observedIfSame, type StatusClient } from "../status-client.js";
import { BEDROCK_JOB_STATES, bedrockJobRegion } from "./bedrock-states.js";

/**
 * Polls a batch inference job: `GET /model-invocation-job/{jobIdentifier}` (GetModelInvocationJob),
 * the ARN as one URL-encoded segment. A job of another region is refused rather than asked of
 * the wrong regional endpoint.
 */
export function createBedrockPoller(provider: string, client: StatusClient, region: string): Poller {
  return async (job, signal) => {
    const jobRegion = bedrockJobRegion(job.id);
    if (jobRegion === null)
      return {
        kind: "failed",
        error: `"${job.id}" is not a batch inference job ARN (arn:aws:bedrock:…:model-invocation-job/…)`,
      };
    if (jobRegion !== region)
      return {
        kind: "failed",
        error: `"${job.id}" is in ${jobRegion}; this provider instance polls ${region}`,
      };
    const answer = await client.get(`/model-invocation-job/${encodeURIComponent(job.id)}`, signal);
    if (answer.kind !== "answer") return answer;
    const object = objectOf(answer.body);
    return observedIfSame(job.id, object.jobArn, () => bedrockObservation(provider, object));
  };
}

/** One GetModelInvocationJob answer (or list summary) as an observation. */
function bedrockObservation(provider: string, job: Record<string, unknown>): Observation {
  const raw = textOf(job.status) ?? "(no status)";
  const state = mapState(BEDROCK_JOB_STATES, raw);
  const updateTime = latest(fromRfc3339(job.lastModifiedTime), fromRfc3339(job.endTime));
  const observation = polledObservation(provider, job.jobArn, state, raw, "model_invocation_job", updateTime);
  if (!isTerminal(state)) return observation;
  // The records themselves are in S3 (`outputDataConfig`): the job is the result.
  const summary = () => ({
    jobArn: job.jobArn,
    jobName: job.jobName ?? null,
    status: raw,
    modelId: job.modelId ?? null,
    outputDataConfig: job.outputDataConfig ?? null,
    endTime: job.endTime ?? null,
    ...(raw === "PartiallyCompleted" ? { partial: true } : {}),
  });
  observation.result = boundedResult(
    {
      ...summary(),
      message: job.message ?? null,
      totalRecordCount: job.totalRecordCount ?? null,
      processedRecordCount: job.processedRecordCount ?? null,
      successRecordCount: job.successRecordCount ?? null,
      errorRecordCount: job.errorRecordCount ?? null,
    },
    summary,
  );
  if (state === "failed" || state === "expired")
    observation.error = { status: raw, message: textOf(job.message) ?? null };
  return observation;
}
