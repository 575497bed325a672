import type { Effect, Job, JobEvent, PollError } from "../core/model.js";
import { type Attempt, RUNS_PROVIDER, type Run } from "../core/run-model.js";
import type { Store } from "../store/store.js";
import { AttemptTable } from "./attempt-table.js";
import { Badge, Flags, Outcome, SourceBadge, StateBadge } from "./components.js";
import { type Column, DataTable } from "./data-table.js";
import { EffectTable } from "./effect-table.js";
import { formatIsoTime, formatJson, formatRelative, formatTime, jobHref } from "./format.js";

/** Events shown per page of a timeline; a longer story pages on with `?after=`. */
const TIMELINE_PAGE = 500;

interface JobStory {
  job: Job;
  events: JobEvent[];
  /** seqNo to continue from when more events exist. */
  moreAfter: number | null;
  effects: Effect[];
  /** For a run on the application's own workers: the run and its attempts. */
  run: { run: Run; attempts: Attempt[] } | null;
}

export async function loadJobStory(store: Store, key: { provider: string; id: string }, after: number) {
  const job = await store.getJob(key);
  if (job === null) return null;
  const [events, effects, run] = await Promise.all([
    store.jobEvents(key, { after, limit: TIMELINE_PAGE + 1 }),
    store.listEffects({ provider: key.provider, jobId: key.id, limit: 100 }).then((page) => page.items),
    key.provider === RUNS_PROVIDER ? loadRun(store, key.id) : Promise.resolve(null),
  ]);
  const more = events.length > TIMELINE_PAGE;
  const shown = more ? events.slice(0, TIMELINE_PAGE) : events;
  return {
    job,
    events: shown,
    moreAfter: more ? (shown.at(-1)?.seqNo ?? null) : null,
    effects,
    run,
  } satisfies JobStory;
}

async function loadRun(store: Store, id: string) {
  const run = await store.getRun(id);
  return run === null ? null : { run, attempts: await store.runAttempts(id) };
}

export function JobPage(props: { story: JobStory; now: number; after: number }) {
  const { job, events, effects, run } = props.story;
  const href = jobHref(job.provider, job.id);
  return (
    <>
      <h1>
        <span class="muted">{job.provider} / </span>
        <span class="mono" id="job-id">
          {job.id}
        </span>{" "}
        <StateBadge state={job.state} /> <Flags job={job} />
      </h1>
      <div class="grid2">
        <section class="panel">
          <dl class="facts">
            <dt>kind</dt>
            <dd>{job.kind ?? "—"}</dd>
            <dt>submitted</dt>
            <dd>
              {formatTime(job.submittedAt)}{" "}
              <span class="muted">({formatRelative(job.submittedAt, props.now)})</span>
            </dd>
            <dt>settled</dt>
            <dd>
              {job.settledAt === null ? "not yet" : formatTime(job.settledAt)}
              {job.settledBy && (
                <>
                  {" by "}
                  <SourceBadge source={job.settledBy} />
                </>
              )}
            </dd>
            <dt>version</dt>
            <dd>{job.version}</dd>
            <dt>registered</dt>
            <dd>{job.registered ? "yes" : "no (adopted from a webhook)"}</dd>
            <dt>reconcile</dt>
            <dd id="job-polls">
              {job.pollAttempts} poll{job.pollAttempts === 1 ? "" : "s"}
              {job.lastPolledAt !== null && `, last ${formatRelative(job.lastPolledAt, props.now)}`}
              {job.nextCheckAt !== null && `, next ${formatRelative(job.nextCheckAt, props.now)}`}
            </dd>
            {job.lastPollError !== null && (
              <>
                <dt>last poll error</dt>
                <dd id="last-poll-error">
                  <Badge kind="flag">{pollErrorSummary(job.lastPollError)}</Badge>{" "}
                  <span class="muted">({formatRelative(job.lastPollError.at, props.now)})</span>
                  <div class="mono small">{job.lastPollError.message}</div>
                </dd>
              </>
            )}
            <dt>ordering key</dt>
            <dd class="mono">
              seq {job.maxSeq ?? "—"}, updateTime{" "}
              {job.maxUpdateTime === null ? "—" : formatTime(job.maxUpdateTime)}
            </dd>
          </dl>
        </section>
        <section class="panel">
          <dl class="facts">
            <dt>result</dt>
            <dd>
              <pre>{formatJson(job.result)}</pre>
            </dd>
            <dt>error</dt>
            <dd>
              <pre>{formatJson(job.error)}</pre>
            </dd>
            <dt>metadata</dt>
            <dd>
              <pre>{formatJson(job.metadata)}</pre>
            </dd>
          </dl>
        </section>
      </div>

      <h2>Timeline</h2>
      <p class="small muted">
        Every observation in the order it was recorded, applied or not. Only applied ones moved the state.
      </p>
      <Timeline events={events} now={props.now} />
      <div class="pager">
        {props.after > 0 && <a href={href}>← from the start</a>}
        {props.story.moreAfter !== null && (
          <a href={`${href}?after=${props.story.moreAfter}`} id="timeline-more">
            later events →
          </a>
        )}
      </div>

      <h2>Effects</h2>
      <EffectTable effects={effects} now={props.now} back={href} empty="No effects for this job." />

      {run && (
        <>
          <h2>
            Run attempts <Badge kind={run.run.status}>{run.run.status}</Badge>
          </h2>
          <p class="small muted">
            {run.run.attemptCount} of {run.run.maxAttempts} attempts used; generation {run.run.generation}
            {run.run.cancelRequested && "; cancel requested"}
          </p>
          <AttemptTable attempts={run.attempts} now={props.now} />
        </>
      )}
    </>
  );
}

function Timeline(props: { events: readonly JobEvent[]; now: number }) {
  const columns: Column<JobEvent>[] = [
    { head: "#", num: true, cell: (event) => event.seqNo },
    {
      head: "recorded",
      title: (event) => formatTime(event.at),
      cell: (event) => formatTime(event.at).slice(11),
    },
    { head: "source", cell: (event) => <SourceBadge source={event.source} /> },
    { head: "raw state", class: "mono", cell: (event) => event.rawState ?? "—" },
    { head: "state", cell: (event) => <StateBadge state={event.state} /> },
    {
      head: "outcome",
      cell: (event) => (
        <Outcome
          applied={event.applied}
          reason={event.reason}
          provider={event.provider}
          rawState={event.rawState}
          explain
        />
      ),
    },
    { head: "delivery id", class: "mono small", cell: (event) => event.deliveryId ?? "—" },
    { head: "detail", class: "mono small", cell: (event) => describeDetail(event.detail) },
  ];
  return (
    <DataTable
      rows={props.events}
      columns={columns}
      empty="No events."
      attrs={{ id: "timeline" }}
      rowAttrs={(event) => ({
        class: event.applied ? undefined : "ignored",
        "data-event": String(event.seqNo),
        "data-applied": String(event.applied),
        "data-reason": event.reason ?? undefined,
      })}
    />
  );
}

/** The event's small detail (seq, updateTime, an admin action) on one line. */
function describeDetail(detail: unknown): string {
  if (detail === null || typeof detail !== "object") return "—";
  const parts: string[] = [];
  for (const [key, value] of Object.entries(detail as Record<string, unknown>)) {
    if (value === undefined || value === null) continue;
    const shown = key === "updateTime" && typeof value === "number" ? formatIsoTime(value) : value;
    parts.push(`${key}=${typeof shown === "object" ? JSON.stringify(shown) : String(shown)}`);
  }
  return parts.length === 0 ? "—" : parts.join(" ");
}

/** "ECONNREFUSED", "HTTP 503", or both when a proxy answered for an unreachable host. */
function pollErrorSummary(error: PollError): string {
  return (
    [error.code, error.status === null ? null : `HTTP ${error.status}`].filter(Boolean).join(", ") || "failed"
  );
}
