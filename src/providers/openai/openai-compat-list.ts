import type { JobLister } from "../discovery-types.js";
import { fromRfc3339, fromUnixSeconds, objectOf, textOf } from "../json-fields.js";
import { readListedJobs } from "../list-page.js";
import { INTENT_TAG_KEY, type ListPage, sweepLister } from "../list-sweep.js";
import type { StatusClient } from "../status-client.js";

const MISTRAL_PAGE_SIZE = 100;

/**
 * Mistral batch jobs, `GET /batch/jobs?page=&page_size=` (`{data, object: "list", total}`, pages
 * counted from 0). The order is not documented, so every page is read (unordered). The tag is the
 * job's `metadata.finality_intent`, which the submitter sets when creating it.
 */
export function createMistralBatchLister(client: StatusClient): JobLister {
  // The page just asked for, for the reader to name the next one: a sweep reads its pages one
  // after the other (the discovery sweep never runs two of one instance at once).
  let page = 0;
  return sweepLister(
    ["batch"],
    "Mistral batch jobs list",
    (cursor, signal) => {
      page = cursor !== null && /^[0-9]{1,6}$/.test(cursor) ? Number(cursor) : 0;
      return client.get("/batch/jobs", signal, `page=${page}&page_size=${MISTRAL_PAGE_SIZE}`);
    },
    (body) => readMistralPage(body, page),
    false,
  );
}

/** The page's jobs; the cursor of the next page is its number, while `total` says there are more. */
function readMistralPage(body: unknown, page = 0): ListPage | string {
  const list = objectOf(body);
  if (!Array.isArray(list.data)) return "the answer has no data array";
  const jobs = readListedJobs(list.data, "batch", "id or created_at", (job) => ({
    id: textOf(job.id),
    createdAt: fromUnixSeconds(job.created_at),
    tag: textOf(objectOf(job.metadata)[INTENT_TAG_KEY]),
  }));
  if (typeof jobs === "string") return jobs;
  const total = typeof list.total === "number" ? list.total : 0;
  return { jobs, next: (page + 1) * MISTRAL_PAGE_SIZE < total ? String(page + 1) : null };
}

/**
 * Together batches, `GET /batches`: a plain JSON array of every batch, no paging, no order
 * documented, no field the submitter chooses (no tag).
 */
export function createTogetherBatchLister(client: StatusClient): JobLister {
  return sweepLister(
    ["batch"],
    "Together batches list",
    (_cursor, signal) => client.get("/batches", signal),
    (body) => {
      if (!Array.isArray(body)) return "the answer is not an array";
      const jobs = readListedJobs(body, "batch", "id or created_at", (batch) => ({
        id: textOf(batch.id),
        createdAt: fromRfc3339(batch.created_at),
      }));
      return typeof jobs === "string" ? jobs : { jobs, next: null };
    },
    false,
  );
}
