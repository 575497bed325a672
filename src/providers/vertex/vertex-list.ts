import type { JobLister } from "../discovery-types.js";
import { fromRfc3339, objectOf, textOf } from "../json-fields.js";
import { fetchQueryPaged, readListedJobs } from "../list-page.js";
import { INTENT_TAG_KEY, type ListPage, sweepLister } from "../list-sweep.js";
import { mapState } from "../state-map.js";
import type { StatusClient } from "../status-client.js";
import { VERTEX_JOB_STATES } from "./vertex-states.js";

const PAGE_SIZE = 100;

/**
 * Batch prediction jobs of one project and location,
 * `GET /{apiVersion}/projects/{p}/locations/{l}/batchPredictionJobs?pageSize=&pageToken=`
 * (`projects.locations.batchPredictionJobs.list`: `{batchPredictionJobs, nextPageToken}`, both
 * left out when empty). The API documents no order, so every sweep reads all pages
 * (`ordered: false`). The tag is the label `finality_intent` (label values: lowercase letters,
 * digits, `-` and `_`, at most 63 characters, so only such intent keys can be carried).
 * The listed state is passed on: a job that ended while nobody watched settles from the list.
 */
export function createVertexLister(
  client: StatusClient,
  apiVersion: string,
  project: string,
  location: string,
): JobLister {
  return sweepLister(
    ["batch_prediction"],
    "Vertex AI batch prediction jobs list",
    fetchQueryPaged(client, {
      path: `/${apiVersion}/projects/${encodeURIComponent(project)}/locations/${encodeURIComponent(location)}/batchPredictionJobs`,
      query: { pageSize: String(PAGE_SIZE) },
      cursorParam: "pageToken",
    }),
    readBatchPredictionJobs,
    false,
  );
}

function readBatchPredictionJobs(body: unknown): ListPage | string {
  const list = objectOf(body);
  const items = list.batchPredictionJobs ?? [];
  if (!Array.isArray(items)) return "`batchPredictionJobs` is not an array";
  const jobs = readListedJobs(items, "batch_prediction", "name or createTime", (job) => ({
    id: textOf(job.name),
    createdAt: fromRfc3339(job.createTime),
    tag: textOf(objectOf(job.labels)[INTENT_TAG_KEY]),
  }));
  if (typeof jobs === "string") return jobs;
  items.forEach((item, index) => {
    const raw = textOf(objectOf(item).state);
    const listed = jobs[index];
    if (raw === undefined || listed === undefined) return;
    listed.state = mapState(VERTEX_JOB_STATES, raw);
    listed.rawState = raw;
    const updateTime = fromRfc3339(objectOf(item).updateTime);
    if (updateTime !== undefined) listed.updateTime = updateTime;
  });
  return { jobs, next: textOf(list.nextPageToken) ?? null };
}
