import type { Child } from "hono/jsx";
import type { IgnoreReason, Job } from "../core/model.js";
import { isRetryQueued } from "../core/retry-queued.js";
import type { BoundedCount } from "../store/overview-reads.js";
import { type Column, DataTable, NONE } from "./data-table.js";
import { formatCount, formatRelative, jobHref } from "./format.js";

/** What each reason an observation was not applied means, in words an operator reads. */
const REASONS: Record<IgnoreReason, { label: string; meaning: string }> = {
  "duplicate-delivery": { label: "duplicate delivery", meaning: "this webhook-id was received before" },
  duplicate: { label: "duplicate", meaning: "the job is already in this terminal state" },
  // The same state again, not newer (seq / updateTime): what senders do all the time, no warning.
  stale: {
    label: "repeat",
    meaning: "the job is already in this state: not newer than what was applied (seq / updateTime)",
  },
  "lower-rank": { label: "lower rank", meaning: "would move the job backwards" },
  "conflicting-terminal": {
    label: "conflicting terminal",
    meaning: "a different terminal state after the job settled; flagged",
  },
  "unknown-state": { label: "unknown state", meaning: "no canonical state has this name" },
  unregistered: { label: "unregistered", meaning: "the provider only accepts registered jobs" },
  "already-registered": { label: "already registered", meaning: "registration never changes a state" },
  "not-found": { label: "provider 404", meaning: "the provider does not know this job" },
  "already-settled-pruned": {
    label: "settled, pruned",
    meaning: "the job settled and retention deleted it; its tombstone keeps it from running again",
  },
  parked: { label: "parked", meaning: "no job registered yet: kept until it is, then applied in order" },
};

export function Badge(props: { kind: string; children: Child; title?: string }) {
  return (
    <span class={`badge ${props.kind}`} title={props.title}>
      {props.children}
    </span>
  );
}

export function StateBadge(props: { state: string }) {
  return <Badge kind={props.state}>{props.state}</Badge>;
}

export function SourceBadge(props: { source: string }) {
  return <Badge kind={`src-${props.source}`}>{props.source}</Badge>;
}

/** See core/retry-queued.ts. */
const RETRY_QUEUED = {
  label: "retry queued",
  meaning: "the attempt ended and the run waits for another one; the job stays running until the run ends",
};

/** "applied", or the reason it was not, with its meaning on hover and in small print. */
export function Outcome(props: {
  applied: boolean;
  reason: string | null;
  explain?: boolean;
  /** With these, a run's designed retry reads as one (see RETRY_QUEUED). */
  provider?: string;
  rawState?: string | null;
}) {
  if (props.applied) return <Badge kind="applied">applied</Badge>;
  const reason = props.reason ?? "ignored";
  const retry = isRetryQueued(props);
  const known = retry
    ? RETRY_QUEUED
    : Object.hasOwn(REASONS, reason)
      ? REASONS[reason as IgnoreReason]
      : null;
  return (
    <span data-reason={reason}>
      <Badge kind={retry ? "retry" : reason} title={known?.meaning}>
        {known?.label ?? reason}
      </Badge>
      {props.explain && known && <div class="small muted">{known.meaning}</div>}
    </span>
  );
}

export function CountCard(props: {
  label: string;
  count: BoundedCount;
  href?: string;
  alert?: boolean;
  name: string;
}) {
  const alert = props.alert === true && props.count.count > 0;
  return (
    <div class={alert ? "card alert" : "card"} data-count={props.name} data-value={props.count.count}>
      <div class="label">{props.label}</div>
      {props.href ? (
        <a class="value" href={props.href}>
          {formatCount(props.count)}
        </a>
      ) : (
        <div class="value">{formatCount(props.count)}</div>
      )}
    </div>
  );
}

export function JobLink(props: { provider: string; id: string }) {
  return (
    <a href={jobHref(props.provider, props.id)} class="mono">
      {props.id}
    </a>
  );
}

/**
 * A job's flags, or nothing at all: a cell with only spaces in it is not `:empty`, and on a phone
 * its "flags" label then sat alone on the card's border.
 */
export function Flags(props: { job: Job }) {
  const { job } = props;
  const badges = [
    job.stuck && <Badge kind="stuck">stuck</Badge>,
    job.conflict && <Badge kind="flag">conflict</Badge>,
    job.anomaly && <Badge kind="flag">{job.anomaly}</Badge>,
  ].filter(Boolean);
  if (badges.length === 0) return null;
  return <>{badges.flatMap((badge, i) => (i === 0 ? [badge] : [" ", badge]))}</>;
}

/** The job table's columns; the ages are relative to `now`. */
function jobColumns(now: number) {
  return {
    provider: { head: "provider", cell: (job) => job.provider },
    id: { head: "id", cell: (job) => <JobLink provider={job.provider} id={job.id} /> },
    job: {
      head: "job",
      cell: (job) => (
        <>
          <span class="muted">{job.provider}/</span>
          <JobLink provider={job.provider} id={job.id} />
        </>
      ),
    },
    kind: { head: "kind", cell: (job) => job.kind ?? NONE },
    state: { head: "state", cell: (job) => <StateBadge state={job.state} /> },
    submitted: {
      head: "submitted",
      title: (job) => new Date(job.submittedAt).toISOString(),
      cell: (job) => formatRelative(job.submittedAt, now),
    },
    updated: {
      head: "updated",
      title: (job) => new Date(job.updatedAt).toISOString(),
      cell: (job) => formatRelative(job.updatedAt, now),
    },
    settledBy: {
      head: "settled by",
      cell: (job) => (job.settledBy ? <SourceBadge source={job.settledBy} /> : NONE),
    },
    flags: { head: "flags", cell: (job) => <Flags job={job} /> },
  } satisfies Record<string, Column<Job>>;
}

/** A table of jobs: provider, id, kind, state, ages, settled by, flags; `compact` for a half-width panel. */
export function JobTable(props: { jobs: readonly Job[]; now: number; empty: string; compact?: boolean }) {
  const c = jobColumns(props.now);
  const columns = props.compact
    ? [c.job, c.state, c.submitted, c.flags]
    : [c.provider, c.id, c.kind, c.state, c.submitted, c.updated, c.settledBy, c.flags];
  return (
    <DataTable
      rows={props.jobs}
      columns={columns}
      empty={props.empty}
      rowAttrs={(job) => ({ "data-job": `${job.provider}/${job.id}`, "data-state": job.state })}
    />
  );
}

export function Flash(props: { message: string | null; error?: boolean }) {
  if (props.message === null) return null;
  return (
    <div class={props.error ? "flash error" : "flash"} role="status" id="flash">
      {props.message}
    </div>
  );
}
