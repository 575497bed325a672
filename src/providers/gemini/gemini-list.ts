import type { JobLister } from "../discovery-types.js";
import { fromRfc3339, objectOf, textOf } from "../json-fields.js";
import { fetchQueryPaged, readListedJobs } from "../list-page.js";
import { INTENT_TAG_KEY, type ListPage, sweepLister } from "../list-sweep.js";
import type { StatusClient } from "../status-client.js";

const PAGE_SIZE = 100;

/** `finality_intent=<key>` anywhere in the display name, set off by spaces. */
const TAG_IN_NAME = new RegExp(`(?:^|\\s)${INTENT_TAG_KEY}=(\\S+)`);

/**
 * Gemini batch jobs, `GET /{apiVersion}/batches?pageSize=&pageToken=` (`generativelanguage.batches.list`,
 * answering a `ListOperationsResponse`: `{operations, nextPageToken}`, the token absent on the
 * last page). Each operation's `metadata` is the `GenerateContentBatch`: `createTime` and the
 * submitter's `displayName`, which carries the tag as `finality_intent=<key>` (a display name is
 * required and often a plain label: only the marked part is taken as a tag). The API documents no order for this list, so
 * every sweep reads all its pages and keeps the jobs created since the last one (`ordered: false`).
 *
 * Not listed: long-running operations (`GET /{apiVersion}/models/{model}/operations` exists per
 * model, but an operation carries neither a creation time nor a field the submitter chose) and
 * interactions (no list endpoint). Those are found through submission intents.
 */
export function createGeminiBatchLister(client: StatusClient, apiVersion: string): JobLister {
  return sweepLister(
    ["batch"],
    "Gemini batches list",
    fetchQueryPaged(client, {
      path: `/${apiVersion}/batches`,
      query: { pageSize: String(PAGE_SIZE) },
      cursorParam: "pageToken",
    }),
    readBatchOperations,
    false,
  );
}

function readBatchOperations(body: unknown): ListPage | string {
  const list = objectOf(body);
  // An empty list is `{}`: proto3 JSON leaves out empty repeated fields.
  const operations = list.operations ?? [];
  if (!Array.isArray(operations)) return "`operations` is not an array";
  const jobs = readListedJobs(operations, "batch", "name or metadata.createTime", (operation) => {
    const metadata = objectOf(operation.metadata);
    return {
      id: textOf(operation.name),
      createdAt: fromRfc3339(metadata.createTime),
      tag: TAG_IN_NAME.exec(textOf(metadata.displayName) ?? "")?.[1],
    };
  });
  if (typeof jobs === "string") return jobs;
  return { jobs, next: textOf(list.nextPageToken) ?? null };
}
