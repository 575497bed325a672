import type { JobLister } from "../discovery-types.js";
import { fromRfc3339, objectOf, textOf } from "../json-fields.js";
import { fetchQueryPaged, readListedJobs } from "../list-page.js";
import { type ListPage, sweepLister } from "../list-sweep.js";
import type { StatusClient } from "../status-client.js";

/** The API's maximum page ("max 100"). */
const PAGE_LIMIT = 100;

/**
 * fal requests of one endpoint, from the Platform API:
 * `GET https://api.fal.ai/v1/models/requests/by-endpoint?endpoint_id=&start=&limit=&cursor=`
 * (https://docs.fal.ai/platform-apis/v1/models/requests/by-endpoint), answering
 * `{items: [{request_id, endpoint_id, sent_at, started_at, ended_at, status_code, ...}], next_cursor, has_more}`.
 * `start` defaults to 24 hours ago at fal, so the lookback is sent. The list is sorted by end
 * time, not creation, so it is read as unordered (every page, then the filter). A listed request
 * is adopted pending with the endpoint as its kind; its first poll reads the result.
 */
export function createFalLister(client: StatusClient, endpointId: string): JobLister {
  return {
    kinds: [endpointId],
    list(query, signal) {
      const paged = fetchQueryPaged(client, {
        path: "/models/requests/by-endpoint",
        query: {
          endpoint_id: endpointId,
          limit: String(PAGE_LIMIT),
          start: new Date(query.sinceMs).toISOString(),
        },
        cursorParam: "cursor",
      });
      return sweepLister([endpointId], "fal requests list", paged, readRequestPage, false).list(
        query,
        signal,
      );
    },
  };
}

function readRequestPage(body: unknown): ListPage | string {
  const list = objectOf(body);
  if (!Array.isArray(list.items)) return "the answer has no items array";
  const jobs = readListedJobs(list.items, "request", "request_id or sent_at", (request) => ({
    id: textOf(request.request_id),
    createdAt: fromRfc3339(request.sent_at) ?? fromRfc3339(request.started_at),
  }));
  if (typeof jobs === "string") return jobs;
  for (const [index, job] of jobs.entries()) {
    const endpoint = textOf(objectOf(list.items[index]).endpoint_id);
    job.kind = endpoint ?? job.kind;
  }
  const next = textOf(list.next_cursor);
  return { jobs, next: list.has_more === true && next !== undefined ? next : null };
}
