import type { JobLister, ListedJob } from "../discovery-types.js";
import { fromRfc3339, objectOf, textOf } from "../json-fields.js";
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
    (cursor, signal) => {
      const query = new URLSearchParams({ limit: String(PAGE_LIMIT) });
      if (cursor !== null) query.set("after_id", cursor);
      return client.get("/v1/messages/batches", signal, query.toString());
    },
    (body) => {
      const list = objectOf(body);
      const jobs = readItems(list.data, "message_batch", () => undefined);
      if (typeof jobs === "string") return jobs;
      const last = textOf(list.last_id) ?? jobs.at(-1)?.id ?? null;
      return { jobs, next: list.has_more === true && last !== null ? last : null };
    },
  );
}

export function createAnthropicSessionLister(client: StatusClient, sessionsBeta: string): JobLister {
  const beta = { "anthropic-beta": sessionsBeta };
  return sweepLister(
    ["session"],
    "Anthropic sessions list",
    (cursor, signal) => {
      const query = new URLSearchParams({ limit: String(PAGE_LIMIT), include_archived: "true" });
      if (cursor !== null) query.set("page", cursor);
      return client.get("/v1/sessions", signal, query.toString(), beta);
    },
    (body): ListPage | string => {
      const list = objectOf(body);
      const jobs = readItems(list.data, "session", (item) => textOf(objectOf(item.metadata)[INTENT_TAG_KEY]));
      if (typeof jobs === "string") return jobs;
      return { jobs, next: textOf(list.next_page) ?? null };
    },
  );
}

function readItems(
  data: unknown,
  kind: string,
  tagOf: (item: Record<string, unknown>) => string | undefined,
): ListedJob[] | string {
  if (!Array.isArray(data)) return "the answer has no data array";
  const jobs: ListedJob[] = [];
  for (const value of data) {
    const item = objectOf(value);
    const id = textOf(item.id);
    const createdAt = fromRfc3339(item.created_at);
    if (id === undefined || createdAt === undefined) return `a ${kind} without id or created_at`;
    const tag = tagOf(item);
    jobs.push({ id, kind, createdAt, ...(tag === undefined ? {} : { tag }) });
  }
  return jobs;
}
