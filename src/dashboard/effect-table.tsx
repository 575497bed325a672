import type { Effect } from "../core/model.js";
import { redactUrlsIn } from "../core/url-redaction.js";
import { Badge, JobLink } from "./components.js";
import { type Column, DataTable, NONE } from "./data-table.js";
import { formatRelative } from "./format.js";

/**
 * Outbox rows with their delivery attempts; pending and dead ones get a retry button (a plain
 * form POST, so it works without the script) that re-arms them under the same idempotency key.
 */
export function EffectTable(props: {
  effects: readonly Effect[];
  now: number;
  back: string;
  empty: string;
  /** Fewer columns, for a half-width panel. */
  compact?: boolean;
}) {
  const { now } = props;
  const job: Column<Effect> = {
    head: "job",
    cell: (effect) => (
      <>
        <span class="muted">{effect.provider}/</span>
        <JobLink provider={effect.provider} id={effect.jobId} />
      </>
    ),
  };
  const attempts: Column<Effect> = { head: "attempts", num: true, cell: (effect) => effect.attempts };
  const retry: Column<Effect> = {
    head: "",
    cell: (effect) => <RetryButton effect={effect} back={props.back} />,
  };
  const columns: Column<Effect>[] = props.compact
    ? [
        {
          head: "effect",
          class: "mono",
          title: (effect) => shownError(effect) ?? undefined,
          cell: (e) => e.name,
        },
        job,
        { head: "status", cell: (effect) => <Badge kind={effect.status}>{effect.status}</Badge> },
        attempts,
        retry,
      ]
    : [
        {
          head: "effect",
          cell: (effect) => (
            <>
              <span class="mono">{effect.name}</span>
              <div class="small muted mono" title="idempotency key">
                {effect.idempotencyKey}
              </div>
            </>
          ),
        },
        job,
        { head: "trigger", cell: (effect) => effect.trigger },
        {
          head: "status",
          cell: (effect) => (
            <>
              <Badge kind={effect.status}>{effect.status}</Badge>
              {effect.deliveredAt !== null && (
                <div class="small muted">{formatRelative(effect.deliveredAt, now)}</div>
              )}
            </>
          ),
        },
        attempts,
        {
          head: "next attempt",
          cell: (effect) => (effect.status === "pending" ? formatRelative(effect.nextAttemptAt, now) : "—"),
        },
        { head: "last error", class: "small", cell: (effect) => shownError(effect) ?? NONE },
        { head: "created", cell: (effect) => formatRelative(effect.createdAt, now) },
        retry,
      ];
  return (
    <DataTable
      rows={props.effects}
      columns={columns}
      empty={props.empty}
      rowAttrs={(effect) => ({ "data-effect": effect.id, "data-status": effect.status })}
    />
  );
}

/** A plain form POST (works without the script); only pending and dead effects can be re-armed. */
function RetryButton(props: { effect: Effect; back: string }) {
  const { effect } = props;
  if (effect.status !== "dead" && effect.status !== "pending") return null;
  return (
    <form method="post" action={`/effects/${encodeURIComponent(effect.id)}/retry`}>
      <input type="hidden" name="back" value={props.back} />
      <button type="submit" class={effect.status === "dead" ? undefined : "secondary"} data-retry={effect.id}>
        {effect.status === "dead" ? "Retry" : "Deliver now"}
      </button>
    </form>
  );
}

/** Written redacted; redacted again for rows stored before that (a receiver URL may hold a credential). */
function shownError(effect: Effect): string | null {
  return effect.lastError === null ? null : redactUrlsIn(effect.lastError);
}
