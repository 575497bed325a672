import type { JobLister } from "../discovery-types.js";
import { fromRfc3339, objectOf, textOf } from "../json-fields.js";
import { afterLastId, fetchQueryPaged, type ListedFields, readListedJobs } from "../list-page.js";
import { INTENT_TAG_KEY, type ListPage, sequenceListers, sweepLister } from "../list-sweep.js";
import type { StatusClient } from "../status-client.js";

/** Jobs per page (batches accept 1-1000, sessions document no maximum): one sweep, few calls. */
const PAGE_LIMIT = 100;

/**
 * Anthropic: message batches, then Managed Agents sessions, swept as one list.
 *
 * - `GET /v1/messages/batches?limit=&after_id=` answers `{data, has_more, first_id, last_id}`,
 *   most recent first. A batch carries nothing the submitter chose (its requests' `custom_id`s
 *   are only in the results file), so a listed batch has no tag: its intent is matched when the
 *   application attaches the id.
 * - `GET /v1/sessions?limit=&page=&include_archived=true` (beta header) answers `{data,
 *   next_page, prev_page}`, `created_at` descending by default. Archived sessions are included:
 *   one archived before anyone saw it end must still settle. The tag is `metadata.finality_intent`.
 */
export function createAnthropicLister(
  client: StatusClient,
  sessionsBeta: string,
  kinds: readonly ("message_batch" | "session")[] = ["message_batch", "session"],
): JobLister {
  // A subset for a key without Managed Agents access: a list that always fails would stop every sweep.
  const listers = [
    ...(kinds.includes("message_batch") ? [createAnthropicBatchLister(client)] : []),
    ...(kinds.includes("session") ? [createAnthropicSessionLister(client, sessionsBeta)] : []),
  ];
  return sequenceListers(listers);
}

export function createAnthropicBatchLister(client: StatusClient): JobLister {
  return sweepLister(
    ["message_batch"],
    "Anthropic message batches list",
    fetchQueryPaged(client, {
      path: "/v1/messages/batches",
      query: { limit: String(PAGE_LIMIT) },
      cursorParam: "after_id",
    }),
    (body) => {
      const list = objectOf(body);
      if (!Array.isArray(list.data)) return "the answer has no data array";
      const jobs = readListedJobs(list.data, "message_batch", "id or created_at", idAndCreation);
      if (typeof jobs === "string") return jobs;
      return { jobs, next: afterLastId(list, jobs) };
    },
  );
}

export function createAnthropicSessionLister(client: StatusClient, sessionsBeta: string): JobLister {
  return sweepLister(
    ["session"],
    "Anthropic sessions list",
    fetchQueryPaged(client, {
      path: "/v1/sessions",
      query: { limit: String(PAGE_LIMIT), include_archived: "true" },
      cursorParam: "page",
      headers: { "anthropic-beta": sessionsBeta },
    }),
    (body): ListPage | string => {
      const list = objectOf(body);
      if (!Array.isArray(list.data)) return "the answer has no data array";
      const jobs = readListedJobs(list.data, "session", "id or created_at", (item) => ({
        ...idAndCreation(item),
        tag: textOf(objectOf(item.metadata)[INTENT_TAG_KEY]),
      }));
      if (typeof jobs === "string") return jobs;
      return { jobs, next: textOf(list.next_page) ?? null };
    },
  );
}

/** Batches and sessions alike: `id`, and `created_at` in RFC 3339. */
function idAndCreation(item: Record<string, unknown>): ListedFields {
  return { id: textOf(item.id), createdAt: fromRfc3339(item.created_at) };
}
