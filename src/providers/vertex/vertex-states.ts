import type { StateTable } from "../state-map.js";

/**
 * Vertex AI `JobState`, the top-level `state` of a BatchPredictionJob.
 * Source: https://cloud.google.com/vertex-ai/docs/reference/rest/v1/JobState and the
 * BatchPredictionJob resource (https://cloud.google.com/vertex-ai/docs/reference/rest/v1/projects.locations.batchPredictionJobs).
 *
 * | state                         | canonical | note |
 * |-------------------------------|-----------|------|
 * | JOB_STATE_QUEUED, _PENDING    | pending   | queued: waiting for resources |
 * | JOB_STATE_RUNNING, _UPDATING  | running   | UPDATING goes back to RUNNING |
 * | JOB_STATE_CANCELLING, _PAUSED | running   | not ended: a paused job can be resumed |
 * | JOB_STATE_SUCCEEDED           | succeeded | |
 * | JOB_STATE_PARTIALLY_SUCCEEDED | succeeded | some instances failed: `result.partial` is true |
 * | JOB_STATE_FAILED              | failed    | `error` is a google.rpc.Status |
 * | JOB_STATE_CANCELLED           | cancelled | |
 * | JOB_STATE_EXPIRED             | expired   | did not finish within its time limit |
 * | JOB_STATE_UNSPECIFIED, others | unknown   | recorded, never applied |
 */
export const VERTEX_JOB_STATES: StateTable = {
  JOB_STATE_QUEUED: "pending",
  JOB_STATE_PENDING: "pending",
  JOB_STATE_RUNNING: "running",
  JOB_STATE_UPDATING: "running",
  JOB_STATE_CANCELLING: "running",
  JOB_STATE_PAUSED: "running",
  JOB_STATE_SUCCEEDED: "succeeded",
  JOB_STATE_PARTIALLY_SUCCEEDED: "succeeded",
  JOB_STATE_FAILED: "failed",
  JOB_STATE_CANCELLED: "cancelled",
  JOB_STATE_EXPIRED: "expired",
};

/** `projects/{project}/locations/{location}/batchPredictionJobs/{id}`, the name `create` answers. */
const JOB_NAME = /^projects\/([^/]+)\/locations\/([^/]+)\/batchPredictionJobs\/([^/]+)$/;

interface VertexJobName {
  project: string;
  location: string;
  job: string;
}

export function parseVertexJobName(name: string): VertexJobName | null {
  const match = JOB_NAME.exec(name);
  if (match === null) return null;
  const [, project, location, job] = match as unknown as [string, string, string, string];
  if ([project, location, job].some((part) => part === "." || part === "..")) return null;
  return { project, location, job };
}

/**
 * The same job: Vertex may answer with the project number where the job was registered under the
 * project id (or the reverse), so the location and the job's own id are what must match.
 */
export function sameVertexJob(asked: string, answered: unknown): boolean {
  if (answered === asked) return true;
  const a = parseVertexJobName(asked);
  const b = typeof answered === "string" ? parseVertexJobName(answered) : null;
  return a !== null && b !== null && a.location === b.location && a.job === b.job;
}
