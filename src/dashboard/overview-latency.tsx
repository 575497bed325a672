import type { LatencySamples } from "../store/latency-reads.js";
import { formatDuration } from "./format.js";

/**
 * The overview's latency panel: provider completion → Finality knowing it, and → effect
 * delivered, p50 and p99 over the last hour by the source that settled the job; and each
 * provider's oldest open job. Computed from stored rows (jobs.settled_at / max_update_time,
 * outbox.delivered_at), not from this process's histograms, so every replica shows the same.
 */
interface LatencyRow {
  source: string;
  samples: number;
  p50Ms: number;
  p99Ms: number;
}

export interface LatencyOverview {
  detection: LatencyRow[];
  completionToEffect: LatencyRow[];
  /** Epoch ms of each provider's oldest open job's submission. */
  oldestOpen: Record<string, number>;
  /** False when the hour held more samples than were read (the newest ones were). */
  complete: boolean;
}

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: readonly number[], p: number): number {
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] ?? 0;
}

/** p50 and p99 per source, sources in a fixed order (webhook, reconcile, discovery, then the rest). */
export function summarize(samples: readonly { source: string; ms: number }[]): LatencyRow[] {
  const bySource = new Map<string, number[]>();
  for (const { source, ms } of samples) {
    const list = bySource.get(source) ?? [];
    list.push(Math.max(0, ms));
    bySource.set(source, list);
  }
  const order = ["webhook", "reconcile", "discovery"];
  const rank = (s: string) => (order.includes(s) ? order.indexOf(s) : order.length);
  return [...bySource.entries()]
    .sort(([a], [b]) => rank(a) - rank(b) || (a < b ? -1 : 1))
    .map(([source, values]) => {
      values.sort((a, b) => a - b);
      return { source, samples: values.length, p50Ms: percentile(values, 50), p99Ms: percentile(values, 99) };
    });
}

export function latencyOverview(
  samples: LatencySamples,
  oldestOpen: Record<string, number>,
  cap: number,
): LatencyOverview {
  return {
    detection: summarize(samples.detection),
    completionToEffect: summarize(samples.completionToEffect),
    oldestOpen,
    complete: samples.detection.length < cap && samples.completionToEffect.length < cap,
  };
}

export function LatencyPanel(props: { latency: LatencyOverview; now: number }) {
  const l = props.latency;
  const providers = Object.entries(l.oldestOpen).sort(([, a], [, b]) => a - b);
  return (
    <section class="panel" data-latency>
      <h2>Latency, last hour</h2>
      <p class="small muted">
        From the provider's own completion time (its updateTime), by what settled the job.
        {l.complete ? "" : " Only the newest samples of the hour were read."}
      </p>
      <LatencyTable name="detection" title="Completion → Finality knew" rows={l.detection} />
      <LatencyTable
        name="completion-to-effect"
        title="Completion → effect delivered"
        rows={l.completionToEffect}
      />
      <h3>Oldest open job</h3>
      {providers.length === 0 ? (
        <p class="muted">No open jobs.</p>
      ) : (
        <table>
          <tbody>
            {providers.map(([provider, at]) => (
              <tr data-oldest-open={provider}>
                <td>{provider}</td>
                <td class="num">{formatDuration(props.now - at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function LatencyTable(props: { name: string; title: string; rows: LatencyRow[] }) {
  return (
    <>
      <h3>{props.title}</h3>
      {props.rows.length === 0 ? (
        <p class="muted" data-latency-empty={props.name}>
          No samples (none settled with a provider time this hour).
        </p>
      ) : (
        <table data-latency-table={props.name}>
          <thead>
            <tr>
              <th>source</th>
              <th class="num">n</th>
              <th class="num">p50</th>
              <th class="num">p99</th>
            </tr>
          </thead>
          <tbody>
            {props.rows.map((row) => (
              <tr data-latency-source={row.source}>
                <td>{row.source}</td>
                <td class="num">{row.samples}</td>
                <td class="num">{formatSeconds(row.p50Ms)}</td>
                <td class="num">{formatSeconds(row.p99Ms)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

/** 0.4 s, 12 s, 3.5 min, 2.1 h: short enough for a phone's column. */
function formatSeconds(ms: number): string {
  const s = ms / 1000;
  if (s < 10) return `${s.toFixed(1)} s`;
  if (s < 120) return `${Math.round(s)} s`;
  if (s < 7200) return `${(s / 60).toFixed(1)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}
