import type { JobLister } from "../discovery-types.js";
import { fromUnixSeconds, objectOf, textOf } from "../json-fields.js";
import { afterLastId, fetchQueryPaged, readListedJobs } from "../list-page.js";
import { INTENT_TAG_KEY, type ListPage, sweepLister } from "../list-sweep.js";
import type { StatusClient } from "../status-client.js";

/** The API's maximum: "Limit can range between 1 and 100, and the default is 20". */
const PAGE_LIMIT = 100;

/**
 * OpenAI batches, `GET /batches?limit=&after=` (newest first; `{object: "list", data, first_id,
 * last_id, has_more}`; `after` is the `last_id` of the page before). The tag is the batch's
 * `metadata.finality_intent`, which the submitter sets in `POST /batches`. Background responses
 * have no list endpoint: they are found through submission intents only.
 */
export function createOpenAIBatchLister(client: StatusClient): JobLister {
  return sweepLister(
    ["batch"],
    "OpenAI batches list",
    fetchQueryPaged(client, { path: "/batches", query: { limit: String(PAGE_LIMIT) }, cursorParam: "after" }),
    readBatchPage,
  );
}

function readBatchPage(body: unknown): ListPage | string {
  const list = objectOf(body);
  if (!Array.isArray(list.data)) return "the answer has no data array";
  const jobs = readListedJobs(list.data, "batch", "id or created_at", (batch) => ({
    id: textOf(batch.id),
    createdAt: fromUnixSeconds(batch.created_at),
    tag: textOf(objectOf(batch.metadata)[INTENT_TAG_KEY]),
  }));
  if (typeof jobs === "string") return jobs;
  return { jobs, next: afterLastId(list, jobs) };
}
