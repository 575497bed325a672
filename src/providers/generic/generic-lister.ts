import { toError } from "../../core/errors.js";
import { redactCredentials } from "../../core/url-redaction.js";
import { pollFailure, unreachable } from "../../engine/poller.js";
import type { JobLister, ListedJob, ListResult } from "../discovery-types.js";
import { fromRfc3339 } from "../json-fields.js";
import type { ProviderHealth } from "../provider-health.js";
import { mapState, type StateTable } from "../state-map.js";

interface GenericListOptions {
  /** The list URL, `{cursor}` where the URL-encoded cursor goes (empty on the first page). */
  url: string;
  headers?: Record<string, string> | undefined;
  states?: StateTable | undefined;
  health?: ProviderHealth | undefined;
  /** Time allowed for one list call (default 10 s). */
  timeoutMs?: number | undefined;
}

/**
 * The generic list API (a contract, like the generic webhook body): `GET discover.url` answers
 * `{"data": [{"jobId", "state", "seq"?, "updateTime"?, "createdAt", "tag"?}], "nextCursor": string | null}`,
 * oldest first, newest last. `nextCursor` null means this was the last page.
 *
 * The resume is the cursor of the page to read next. On the last page it stays that page's own
 * cursor (the API gave no later one): the next sweep reads that page again, sees what was added
 * after it, and follows a `nextCursor` if one appeared. A sweep so costs what is new plus one page.
 */
export function createGenericLister(provider: string, options: GenericListOptions): JobLister {
  const timeoutMs = options.timeoutMs ?? 10_000;
  return {
    // Generic jobs carry no kind: the list covers whatever the API lists.
    kinds: [],
    async list(query, signal): Promise<ListResult> {
      const cursor = query.resume ?? "";
      const url = options.url.replaceAll("{cursor}", encodeURIComponent(cursor));
      let response: Response;
      let text: string;
      try {
        response = await fetch(url, {
          headers: { accept: "application/json", ...options.headers },
          signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
          redirect: "manual",
        });
        text = await response.text();
      } catch (error) {
        const failed = unreachable(url, error);
        return { kind: "failed", error: failed.error };
      }
      const shown = redactCredentials(url);
      if (response.status === 401 || response.status === 403) {
        const message = `${provider}: the list API refused the configured credentials (${response.status})`;
        options.health?.authRefused(provider, response.status, message);
        return { kind: "failed", error: `${message}: GET ${shown}`, status: response.status };
      }
      if (!response.ok) {
        const failed = pollFailure(response.status, response.headers.get("retry-after"), url);
        const retryAfterMs = failed.kind === "failed" ? failed.retryAfterMs : undefined;
        return {
          kind: "failed",
          error: `GET ${shown}: list API answered ${response.status}`,
          status: response.status,
          ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
        };
      }
      try {
        const { jobs, nextCursor } = parseListPage(text, options.states);
        return nextCursor === null
          ? { kind: "page", jobs, resume: query.resume, done: true }
          : { kind: "page", jobs, resume: nextCursor, done: false };
      } catch (error) {
        return { kind: "failed", error: `GET ${shown}: list API answer: ${toError(error).message}` };
      }
    },
  };
}

/** One page of the generic list API; throws on anything outside the contract. */
export function parseListPage(
  text: string,
  states?: StateTable,
): { jobs: ListedJob[]; nextCursor: string | null } {
  const body: unknown = JSON.parse(text);
  if (!isObject(body) || !Array.isArray(body.data)) throw new Error('expected {"data": [...], "nextCursor"}');
  const next = body.nextCursor;
  if (next !== null && (typeof next !== "string" || next === "")) {
    throw new Error("nextCursor must be a non-empty string or null");
  }
  const jobs = body.data.map((item, index) => listedJob(item, index, states));
  return { jobs, nextCursor: next };
}

function listedJob(item: unknown, index: number, states: StateTable | undefined): ListedJob {
  const at = `data[${index}]`;
  if (!isObject(item)) throw new Error(`${at} must be an object`);
  const { jobId, state, seq, updateTime, createdAt, tag } = item;
  if (typeof jobId !== "string" || jobId === "") throw new Error(`${at}.jobId must be a non-empty string`);
  if (typeof state !== "string" || state === "") throw new Error(`${at}.state must be a non-empty string`);
  const created = epochMillis(createdAt);
  if (created === undefined) throw new Error(`${at}.createdAt must be RFC 3339 or epoch seconds/ms`);
  const listed: ListedJob = {
    id: jobId,
    createdAt: created,
    state: states ? mapState(states, state) : state,
    rawState: state,
  };
  if (typeof tag === "string" && tag !== "") listed.tag = tag;
  if (typeof seq === "number" && Number.isSafeInteger(seq) && seq >= 0) listed.seq = seq;
  const updated = updateTime === undefined ? undefined : epochMillis(updateTime);
  if (updated !== undefined) listed.updateTime = updated;
  return listed;
}

/** RFC 3339 text, or a number: seconds below 10^11, else milliseconds (as the generic poller reads). */
function epochMillis(value: unknown): number | undefined {
  if (typeof value === "number" && Number.isFinite(value) && value >= 0)
    return value < 1e11 ? value * 1000 : value;
  return fromRfc3339(value);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
