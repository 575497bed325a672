import type { Job, JobKey } from "../core/model.js";
import { CANONICAL_STATES, type CanonicalState, isCanonicalState } from "../core/states.js";
import type { JobFlag } from "../store/overview-reads.js";
import type { Page, Store } from "../store/store.js";
import { JobTable } from "./components.js";
import { choicesOf, LabelledSelect, type SelectChoice } from "./filter-select.js";
import { queryString } from "./format.js";

const PAGE_SIZES = [25, 50, 100, 200] as const;

export interface JobsFilter {
  state?: CanonicalState | undefined;
  provider?: string | undefined;
  kind?: string | undefined;
  stuck?: boolean | undefined;
  open?: boolean | undefined;
  flag?: JobFlag | undefined;
  /** Exact job id to look up (in every provider, or in `provider`). */
  q?: string | undefined;
  limit: number;
  cursor?: string | undefined;
}

/** Reads the filters from the query string; a value that makes no sense is dropped and named. */
export function parseJobsFilter(
  query: Record<string, string>,
  cursorMaxLength = 200,
): { filter: JobsFilter; problems: string[] } {
  const problems: string[] = [];
  const text = (name: string, max = 256) => {
    const value = query[name]?.trim();
    if (!value) return undefined;
    if (value.length > max) {
      problems.push(`${name} is longer than ${max} characters`);
      return undefined;
    }
    return value;
  };
  const flagOf = (name: string) => {
    const value = query[name];
    if (value === undefined || value === "") return undefined;
    if (value === "true" || value === "false") return value === "true";
    problems.push(`${name} must be true or false`);
    return undefined;
  };
  const state = text("state");
  if (state !== undefined && !isCanonicalState(state)) problems.push(`unknown state "${state}"`);
  const flag = text("flag");
  if (flag !== undefined && flag !== "conflict" && flag !== "anomaly")
    problems.push(`unknown flag "${flag}"`);
  const limit = Number(query.limit ?? 50);
  return {
    filter: {
      state: state !== undefined && isCanonicalState(state) ? state : undefined,
      provider: text("provider", 64),
      kind: text("kind", 128),
      stuck: flagOf("stuck"),
      open: flagOf("open"),
      flag: flag === "conflict" || flag === "anomaly" ? flag : undefined,
      q: text("q", 1024),
      limit: (PAGE_SIZES as readonly number[]).includes(limit) ? limit : 50,
      cursor: text("cursor", cursorMaxLength),
    },
    problems,
  };
}

/** The filter as query parameters (without the cursor), for links that keep it. */
function filterParams(filter: JobsFilter): Record<string, string | undefined> {
  return {
    state: filter.state,
    provider: filter.provider,
    kind: filter.kind,
    stuck: filter.stuck === undefined ? undefined : String(filter.stuck),
    open: filter.open === undefined ? undefined : String(filter.open),
    flag: filter.flag,
    q: filter.q,
    limit: filter.limit === 50 ? undefined : String(filter.limit),
  };
}

/**
 * One page of jobs, by index: a search is one key lookup per provider; a flag uses its partial
 * index; everything else is the API's own listing (keyset cursor, newest first).
 */
export async function loadJobs(
  store: Store,
  filter: JobsFilter,
  providers: readonly string[],
): Promise<Page<Job>> {
  if (filter.q !== undefined) {
    const q = filter.q;
    const keys: JobKey[] = (filter.provider ? [filter.provider] : providers).map((provider) => ({
      provider,
      id: q,
    }));
    const found = await Promise.all(keys.map((key) => store.getJob(key)));
    return { items: found.filter((job): job is Job => job !== null), nextCursor: null };
  }
  if (filter.flag !== undefined) {
    return store.listFlaggedJobs(filter.flag, {
      limit: filter.limit,
      ...(filter.cursor ? { cursor: filter.cursor } : {}),
    });
  }
  return store.listJobs({
    state: filter.state,
    provider: filter.provider,
    kind: filter.kind,
    stuck: filter.stuck,
    open: filter.open,
    limit: filter.limit,
    cursor: filter.cursor,
  });
}

const ANY: SelectChoice = ["", "any"];
const STUCK_CHOICES: SelectChoice[] = [ANY, ["true", "stuck"], ["false", "not stuck"]];
const OPEN_CHOICES: SelectChoice[] = [ANY, ["true", "open only"]];
const FLAG_CHOICES: SelectChoice[] = [
  ["", "—"],
  ["conflict", "conflicting terminal"],
  ["anomaly", "provider anomaly"],
];

export function JobsFilters(props: { filter: JobsFilter; providers: readonly string[]; problems: string[] }) {
  const { filter } = props;
  return (
    <>
      <h1>Jobs</h1>
      <form class="filters" method="get" action="/jobs" id="job-filters">
        <label>
          search by id
          <input type="search" name="q" value={filter.q ?? ""} placeholder="exact job id" size={28} />
        </label>
        <LabelledSelect
          label="state"
          name="state"
          choices={[ANY, ...choicesOf(CANONICAL_STATES)]}
          selected={filter.state ?? ""}
        />
        <LabelledSelect
          label="provider"
          name="provider"
          choices={[ANY, ...choicesOf(props.providers)]}
          selected={filter.provider ?? ""}
        />
        <label>
          kind
          <input type="text" name="kind" value={filter.kind ?? ""} size={12} />
        </label>
        <LabelledSelect
          label="stuck"
          name="stuck"
          choices={STUCK_CHOICES}
          selected={String(filter.stuck ?? "")}
        />
        <LabelledSelect
          label="open"
          name="open"
          choices={OPEN_CHOICES}
          selected={String(filter.open ?? "")}
        />
        <LabelledSelect label="flagged" name="flag" choices={FLAG_CHOICES} selected={filter.flag ?? ""} />
        <LabelledSelect
          label="per page"
          name="limit"
          choices={choicesOf(PAGE_SIZES)}
          selected={String(filter.limit)}
        />
        <button type="submit">Apply</button>
        <a href="/jobs">clear</a>
      </form>
      {props.problems.length > 0 && <div class="flash error">Ignored: {props.problems.join("; ")}</div>}
      {filter.flag !== undefined &&
        (filter.state || filter.provider || filter.kind || filter.stuck !== undefined) && (
          <p class="small muted">
            A flagged listing shows every flagged job; the other filters do not apply to it.
          </p>
        )}
    </>
  );
}

/** The live part: the table and the pager. */
export function JobsList(props: { filter: JobsFilter; page: Page<Job>; now: number }) {
  const { filter, page } = props;
  const params = filterParams(filter);
  return (
    <>
      <JobTable
        jobs={page.items}
        now={props.now}
        empty={filter.q !== undefined ? `No job with id "${filter.q}".` : "No job matches these filters."}
      />
      <div class="pager">
        {filter.cursor !== undefined && (
          <a href={`/jobs${queryString(params)}`} id="first-page">
            ← first page
          </a>
        )}
        <span class="small" id="page-size" data-items={page.items.length}>
          {page.items.length} shown, newest first
        </span>
        {page.nextCursor !== null && (
          <a href={`/jobs${queryString({ ...params, cursor: page.nextCursor })}`} id="next-page" rel="next">
            next page →
          </a>
        )}
      </div>
    </>
  );
}
