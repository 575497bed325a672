import type { JobLister } from "../discovery-types.js";
import { fromRfc3339, objectOf, textOf } from "../json-fields.js";
import { readListedJobs } from "../list-page.js";
import { type ListPage, sweepLister } from "../list-sweep.js";
import type { StatusClient } from "../status-client.js";

/**
 * Replicate predictions, `GET /predictions` (100 per page, most recent first; `{next, previous,
 * results}`, `next` the URL of the following page). Only `next`'s query is kept and sent back to
 * the configured base URL: the API key never follows a URL a response named. A listed prediction
 * (`schemas_prediction_response`) has no `webhook` field, so the tag a submitter put in its
 * webhook URL cannot be read back here: the intent is matched when the application attaches the id.
 */
export function createReplicateLister(client: StatusClient): JobLister {
  return sweepLister(
    ["prediction"],
    "Replicate predictions list",
    (cursor, signal) => client.get("/predictions", signal, cursor ?? undefined),
    readPredictionPage,
  );
}

function readPredictionPage(body: unknown): ListPage | string {
  const list = objectOf(body);
  if (!Array.isArray(list.results)) return "the answer has no results array";
  const jobs = readListedJobs(list.results, "prediction", "id or created_at", (prediction) => ({
    id: textOf(prediction.id),
    createdAt: fromRfc3339(prediction.created_at),
  }));
  if (typeof jobs === "string") return jobs;
  const next = textOf(list.next);
  if (next === undefined) return { jobs, next: null };
  let query: string;
  try {
    query = new URL(next).search.replace(/^\?/, "");
  } catch {
    return "`next` is not a URL";
  }
  return query === "" ? "`next` has no cursor" : { jobs, next: query };
}
