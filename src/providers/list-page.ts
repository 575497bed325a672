import type { ListedJob } from "./discovery-types.js";
import { objectOf, textOf } from "./json-fields.js";
import type { StatusAnswer, StatusClient, StatusFailure } from "./status-client.js";

// The parts of a provider's list page that the listers share: how the page is asked for, how its
// items become listed jobs, and where a `{has_more, last_id}` page goes next. What is left in each
// provider file is its own field names.

/** A list paged by query parameters: the same ones on every page, plus the cursor after the first. */
interface QueryPaging {
  path: string;
  /** Sent on every page: the page size (`limit=100`) and any filter. */
  query: Record<string, string>;
  /** The parameter that carries the cursor (`after`, `pageToken`, ...). */
  cursorParam: string;
  headers?: Record<string, string>;
}

/** `sweepLister`'s `fetchPage` for a list paged by query parameters. */
export function fetchQueryPaged(
  client: StatusClient,
  paging: QueryPaging,
): (cursor: string | null, signal: AbortSignal) => Promise<StatusAnswer | StatusFailure> {
  return (cursor, signal) => {
    const query = new URLSearchParams(paging.query);
    if (cursor !== null) query.set(paging.cursorParam, cursor);
    return client.get(paging.path, signal, query.toString(), paging.headers);
  };
}

/** What a lister reads of one listed item. */
export interface ListedFields {
  id: string | undefined;
  createdAt: number | undefined;
  tag?: string | undefined;
}

/**
 * The items of one page as listed jobs of `kind`. An item without an id or a creation time fails
 * the page with `a <kind> without <required>`: an answer the lister cannot read is reported, not
 * taken in part.
 */
export function readListedJobs(
  items: readonly unknown[],
  kind: string,
  required: string,
  read: (item: Record<string, unknown>) => ListedFields,
): ListedJob[] | string {
  const jobs: ListedJob[] = [];
  for (const item of items) {
    const { id, createdAt, tag } = read(objectOf(item));
    if (id === undefined || createdAt === undefined) return `a ${kind} without ${required}`;
    jobs.push({ id, kind, createdAt, ...(tag === undefined ? {} : { tag }) });
  }
  return jobs;
}

/** The cursor after a `{has_more, last_id}` page (OpenAI, Anthropic): its last id; null at the end. */
export function afterLastId(list: Record<string, unknown>, jobs: readonly ListedJob[]): string | null {
  const last = textOf(list.last_id) ?? jobs.at(-1)?.id ?? null;
  return list.has_more === true && last !== null ? last : null;
}
