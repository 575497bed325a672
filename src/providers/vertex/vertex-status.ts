import type { Observation } from "../../core/model.js";
import { isTerminal } from "../../core/states.js";
import type { Poller } from "../../engine/poller.js";
import { boundedResult } from "../bounded-result.js";
import { fromRfc3339, latest, objectOf, textOf } from "../json-fields.js";
import { mapState, polledObservation } from "../state-map.js";
import { encodePath, type StatusClient } from "../status-client.js";
import { parseVertexJobName, sameVertexJob, VERTEX_JOB_STATES } from "./vertex-states.js";

/**
 * Polls a batch prediction job: `GET /{apiVersion}/{name}` on the configured location's endpoint
 * (`projects.locations.batchPredictionJobs.get`). A job of another location is refused rather
 * than asked of the wrong regional endpoint.
 */
export function createVertexPoller(
  provider: string,
  client: StatusClient,
  apiVersion: string,
  location: string,
): Poller {
  return async (job, signal) => {
    const name = parseVertexJobName(job.id);
    if (name === null)
      return { kind: "failed", error: `"${job.id}" is not projects/…/locations/…/batchPredictionJobs/…` };
    if (name.location !== location)
      return {
        kind: "failed",
        error: `"${job.id}" is in location ${name.location}; this provider instance polls ${location}`,
      };
    const path = encodePath(job.id);
    if (path === null) return { kind: "failed", error: `"${job.id}" is not a valid resource name` };
    const answer = await client.get(`/${apiVersion}/${path}`, signal);
    if (answer.kind !== "answer") return answer;
    const object = objectOf(answer.body);
    if (!sameVertexJob(job.id, object.name))
      return { kind: "failed", error: `status API answered for "${String(object.name)}"` };
    return { kind: "observed", observation: vertexObservation(provider, job.id, object) };
  };
}

/** One BatchPredictionJob as an observation of the job `id`. */
function vertexObservation(provider: string, id: string, job: Record<string, unknown>): Observation {
  const raw = textOf(job.state) ?? "(no state)";
  const state = mapState(VERTEX_JOB_STATES, raw);
  const updateTime = latest(fromRfc3339(job.updateTime), fromRfc3339(job.endTime));
  const observation = polledObservation(provider, id, state, raw, "batch_prediction", updateTime);
  if (!isTerminal(state)) return observation;
  const summary = () => ({
    name: job.name,
    state: raw,
    displayName: job.displayName ?? null,
    model: job.model ?? null,
    outputInfo: job.outputInfo ?? null,
    completionStats: job.completionStats ?? null,
    endTime: job.endTime ?? null,
    ...(raw === "JOB_STATE_PARTIALLY_SUCCEEDED" ? { partial: true } : {}),
  });
  // The predictions themselves are in Cloud Storage or BigQuery (`outputInfo`): the job is the result.
  observation.result = boundedResult(
    { ...summary(), partialFailures: job.partialFailures ?? null, labels: job.labels ?? null },
    summary,
  );
  if (job.error !== undefined && job.error !== null) observation.error = job.error;
  return observation;
}
