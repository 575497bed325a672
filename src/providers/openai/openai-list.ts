import type { JobLister, ListedJob } from "../discovery-types.js";
import { fromUnixSeconds, objectOf, textOf } from "../json-fields.js";
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
    (cursor, signal) => {
      const query = new URLSearchParams({ limit: String(PAGE_LIMIT) });
      if (cursor !== null) query.set("after", cursor);
      return client.get("/batches", signal, query.toString());
    },
    readBatchPage,
  );
}

export function readBatchPage(body: unknown): ListPage | string {
  const list = objectOf(body);
  if (!Array.isArray(list.data)) return "the answer has no data array";
  const jobs: ListedJob[] = [];
  for (const item of list.data) {
    const batch = objectOf(item);
    const id = textOf(batch.id);
    const createdAt = fromUnixSeconds(batch.created_at);
    if (id === undefined || createdAt === undefined) return "a batch without id or created_at";
    const tag = textOf(objectOf(batch.metadata)[INTENT_TAG_KEY]);
    jobs.push({ id, kind: "batch", createdAt, ...(tag === undefined ? {} : { tag }) });
  }
  const last = textOf(list.last_id) ?? jobs.at(-1)?.id ?? null;
  return { jobs, next: list.has_more === true && last !== null ? last : null };
}
