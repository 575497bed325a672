import type { JobLister, ListedJob, ListQuery, ListResult } from "./discovery-types.js";
import type { StatusAnswer, StatusFailure } from "./status-client.js";

/**
 * The part every provider's lister shares: how far a sweep has read, kept in `resume`, and when
 * it stops. Provider files only turn one answer into `{jobs, next}`.
 *
 * A sweep reads a newest-first list from the top until it reaches a job older than what the last
 * finished sweep had already covered (`mark`) or older than the lookback (`sinceMs`). The sweep in
 * progress remembers its page token (`cursor`) and the newest job it saw (`top`); when it ends,
 * `top` becomes the next sweep's `mark`. So a restart resumes at the page it was on, and a sweep
 * after a quiet hour costs one page.
 */

/** The query key (OpenAI/Anthropic `metadata`, Replicate's webhook URL) that carries the intent key. */
export const INTENT_TAG_KEY = "finality_intent";

/**
 * Jobs this much older than `mark` are read again: ids created in the same second (OpenAI and
 * Replicate times are coarse) and a list that shows a job a little after its creation time.
 * Re-reading a known job costs nothing: the sweep adopts only jobs Finality does not know.
 */
const OVERLAP_MS = 2 * 60_000;

interface SweepState {
  /** Newest `createdAt` the last finished sweep covered; null before the first one. */
  mark: number | null;
  /** Newest `createdAt` seen in the sweep in progress. */
  top: number | null;
  /** Page token of the next page of the sweep in progress; null: the next call starts at the top. */
  cursor: string | null;
  /**
   * Unordered lists only: the newest `createdAt` of the last finished sweep, which becomes `mark`
   * one sweep later. On such a list a job created during a sweep can land on a page already read
   * while a newer one lands on a page still to come; a mark lagging one sweep behind reads it next time.
   */
  last: number | null;
}

/** One page as the provider answered it, newest first; `next` is the token of the page after. */
export interface ListPage {
  jobs: ListedJob[];
  next: string | null;
}

const FRESH: SweepState = { mark: null, top: null, cursor: null, last: null };

/** The state a `resume` value holds; anything unreadable (another version's) starts afresh. */
function readResume(resume: string | null): SweepState {
  if (resume === null) return FRESH;
  try {
    const value = JSON.parse(resume) as Record<string, unknown>;
    return {
      mark: finiteOrNull(value.mark),
      top: finiteOrNull(value.top),
      cursor: typeof value.cursor === "string" && value.cursor !== "" ? value.cursor : null,
      last: finiteOrNull(value.last),
    };
  } catch {
    return FRESH;
  }
}

/**
 * The result of reading `page` at `state`. `ordered: false` is for a list whose order is not
 * documented: nothing is inferred from one job's age, every page is read, and only the filter applies.
 */
function advance(state: SweepState, page: ListPage, sinceMs: number, ordered = true): ListResult {
  const floor = Math.max(sinceMs, state.mark === null ? Number.NEGATIVE_INFINITY : state.mark - OVERLAP_MS);
  const fresh = page.jobs.filter((job) => job.createdAt >= floor);
  const reachedOld = ordered && fresh.length < page.jobs.length;
  let top = state.top;
  for (const job of page.jobs) if (top === null || job.createdAt > top) top = job.createdAt;
  if (reachedOld || page.next === null) {
    const newest = top === null ? state.mark : Math.max(top, state.mark ?? top);
    const next: SweepState = ordered
      ? { mark: newest, top: null, cursor: null, last: null }
      : { mark: state.last, top: null, cursor: null, last: newest };
    return { kind: "page", jobs: fresh, resume: writeResume(next), done: true };
  }
  return {
    kind: "page",
    jobs: fresh,
    resume: writeResume({ ...state, top, cursor: page.next }),
    done: false,
  };
}

function writeResume(state: SweepState): string {
  return JSON.stringify(state);
}

/** A list call's non-answer as the sweep reads it: 429/5xx keep their status and Retry-After. */
function listFailure(answer: StatusFailure, what: string): ListResult {
  if (answer.kind === "not-found")
    return { kind: "failed", error: `${what}: the list endpoint answered 404`, status: 404 };
  return {
    kind: "failed",
    error: `${what}: ${answer.error}`,
    ...(answer.status === undefined ? {} : { status: answer.status }),
    ...(answer.retryAfterMs === undefined ? {} : { retryAfterMs: answer.retryAfterMs }),
  };
}

/** A lister over one newest-first list: `fetchPage` asks for the page at `cursor` (null: the top). */
export function sweepLister(
  kinds: readonly string[],
  what: string,
  fetchPage: (cursor: string | null, signal: AbortSignal) => Promise<StatusAnswer | StatusFailure>,
  readPage: (body: unknown) => ListPage | string,
  ordered = true,
): JobLister {
  return {
    kinds,
    async list(query: ListQuery, signal: AbortSignal): Promise<ListResult> {
      const state = readResume(query.resume);
      const answer = await fetchPage(state.cursor, signal);
      // A page token the provider no longer takes (expired, or the `after` id was deleted) would
      // fail every sweep from now on: this sweep starts again from the top instead.
      if (state.cursor !== null && refusedCursor(answer))
        return { kind: "page", jobs: [], resume: writeResume({ ...state, cursor: null }), done: false };
      if (answer.kind !== "answer") return listFailure(answer, what);
      const page = readPage(answer.body);
      if (typeof page === "string") return { kind: "failed", error: `${what}: ${page}` };
      return advance(state, page, query.sinceMs, ordered);
    },
  };
}

/**
 * Several lists swept one after the other as one lister (Anthropic's batches, then its sessions):
 * the sweep is done when the last one is. `resume` holds which list is being read and each one's.
 */
export function sequenceListers(listers: readonly JobLister[]): JobLister {
  if (listers.length === 0) throw new Error("sequenceListers needs at least one lister");
  return {
    kinds: listers.flatMap((lister) => lister.kinds),
    async list(query, signal) {
      const { at, parts } = readSequence(query.resume, listers.length);
      const lister = listers[at] as JobLister;
      const result = await lister.list({ resume: parts[at] ?? null, sinceMs: query.sinceMs }, signal);
      if (result.kind === "failed") return result;
      parts[at] = result.resume;
      const last = at === listers.length - 1;
      const next = result.done ? (last ? 0 : at + 1) : at;
      return { ...result, resume: JSON.stringify({ at: next, parts }), done: result.done && last };
    },
  };
}

function readSequence(resume: string | null, count: number): { at: number; parts: (string | null)[] } {
  const empty = { at: 0, parts: Array.from({ length: count }, () => null) };
  if (resume === null) return empty;
  try {
    const value = JSON.parse(resume) as { at?: unknown; parts?: unknown };
    const parts = Array.isArray(value.parts) ? value.parts : [];
    const at = typeof value.at === "number" && Number.isInteger(value.at) ? value.at : 0;
    if (parts.length !== count || at < 0 || at >= count) return empty;
    return { at, parts: parts.map((part) => (typeof part === "string" ? part : null)) };
  } catch {
    return empty;
  }
}

function refusedCursor(answer: StatusAnswer | StatusFailure): boolean {
  return (
    answer.kind === "not-found" ||
    (answer.kind === "failed" && (answer.status === 400 || answer.status === 410))
  );
}

function finiteOrNull(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}
