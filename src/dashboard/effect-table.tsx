import type { Effect } from "../core/model.js";
import { redactUrlsIn } from "../core/url-redaction.js";
import { Badge, JobLink } from "./components.js";
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
  if (props.effects.length === 0) return <p class="muted">{props.empty}</p>;
  if (props.compact) return <CompactEffectTable {...props} />;
  return (
    <table>
      <thead>
        <tr>
          <th>effect</th>
          <th>job</th>
          <th>trigger</th>
          <th>status</th>
          <th class="num">attempts</th>
          <th>next attempt</th>
          <th>last error</th>
          <th>created</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {props.effects.map((effect) => (
          <tr data-effect={effect.id} data-status={effect.status}>
            <td>
              <span class="mono">{effect.name}</span>
              <div class="small muted mono" title="idempotency key">
                {effect.idempotencyKey}
              </div>
            </td>
            <td>
              <span class="muted">{effect.provider}/</span>
              <JobLink provider={effect.provider} id={effect.jobId} />
            </td>
            <td>{effect.trigger}</td>
            <td>
              <Badge kind={effect.status}>{effect.status}</Badge>
              {effect.deliveredAt !== null && (
                <div class="small muted">{formatRelative(effect.deliveredAt, props.now)}</div>
              )}
            </td>
            <td class="num">{effect.attempts}</td>
            <td>{effect.status === "pending" ? formatRelative(effect.nextAttemptAt, props.now) : "—"}</td>
            <td class="small">{shownError(effect) ?? <span class="muted">—</span>}</td>
            <td>{formatRelative(effect.createdAt, props.now)}</td>
            <td>
              <RetryButton effect={effect} back={props.back} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function CompactEffectTable(props: { effects: readonly Effect[]; now: number; back: string }) {
  return (
    <table>
      <thead>
        <tr>
          <th>effect</th>
          <th>job</th>
          <th>status</th>
          <th class="num">attempts</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {props.effects.map((effect) => (
          <tr data-effect={effect.id} data-status={effect.status}>
            <td class="mono" title={shownError(effect) ?? undefined}>
              {effect.name}
            </td>
            <td>
              <span class="muted">{effect.provider}/</span>
              <JobLink provider={effect.provider} id={effect.jobId} />
            </td>
            <td>
              <Badge kind={effect.status}>{effect.status}</Badge>
            </td>
            <td class="num">{effect.attempts}</td>
            <td>
              <RetryButton effect={effect} back={props.back} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
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
