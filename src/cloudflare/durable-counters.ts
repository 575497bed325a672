import { noopMetrics, type ServiceMetrics } from "../http/service-metrics.js";
import type { SqlStorage } from "./cloudflare-types.js";

/** One counter series of one shard: its metric name, its label text (`{a="x",b="y"}`), its value. */
export interface CounterSample {
  name: string;
  labels: string;
  value: number;
}

/** The counters kept on Workers, with `finality serve`'s names, help and label names (prom-metrics.ts). */
const DURABLE_COUNTERS = {
  finality_webhooks_received_total:
    "Webhooks received, by provider instance and outcome (applied, an ignore reason, or why refused).",
  finality_events_applied_total: "Observations that changed a job, by source.",
  finality_events_ignored_total: "Observations recorded without changing a job, by source and reason.",
  finality_polls_total:
    "Reconcile polls, by provider instance and outcome (observed, not-found, failed, error).",
  finality_effect_attempts_total:
    "Effect delivery attempts, by outcome (delivered, retry, dead, lost-claim).",
} as const;
type CounterName = keyof typeof DURABLE_COUNTERS;

const escapeLabel = (value: string) =>
  value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");

function labelText(labels: Record<string, string>): string {
  return `{${Object.entries(labels)
    .map(([key, value]) => `${key}="${escapeLabel(value)}"`)
    .join(",")}}`;
}

/**
 * Counters kept in a ledger object's own SQLite storage, so that an eviction (or a deploy) does
 * not reset them: Prometheus reads a counter that drops as a restart, and an isolate's memory
 * drops whenever Cloudflare evicts it. Each increment is one upsert in the object's database,
 * written after the transaction it counts (as on Node, where counters move after the commit):
 * an object that dies between the two misses that one increment, and never counts one twice.
 * The table is the object's own (like the shard fence's), not part of the shared migrations, so
 * it never exists on Node.
 */
export class DurableCounters {
  readonly #sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
    sql.exec(
      `CREATE TABLE IF NOT EXISTS finality_counters (
         name TEXT NOT NULL, labels TEXT NOT NULL, value INTEGER NOT NULL, PRIMARY KEY (name, labels)
       ) WITHOUT ROWID`,
    );
  }

  add(name: CounterName, labels: Record<string, string>): void {
    this.#sql.exec(
      `INSERT INTO finality_counters (name, labels, value) VALUES (?, ?, 1)
       ON CONFLICT (name, labels) DO UPDATE SET value = value + 1`,
      name,
      labelText(labels),
    );
  }

  read(): CounterSample[] {
    return this.#sql
      .exec("SELECT name, labels, value FROM finality_counters ORDER BY name, labels")
      .toArray() as unknown as CounterSample[];
  }

  /** What the app, the reconciler and the dispatcher count, into this object's storage. */
  metrics(): ServiceMetrics {
    return {
      ...noopMetrics,
      webhookReceived: (provider, outcome) =>
        this.add("finality_webhooks_received_total", { provider, outcome }),
      eventRecorded: (source, applied, reason) =>
        applied
          ? this.add("finality_events_applied_total", { source })
          : this.add("finality_events_ignored_total", { source, reason: reason ?? "unknown" }),
      pollFinished: (provider, outcome) => this.add("finality_polls_total", { provider, outcome }),
      effectAttempted: (outcome) => this.add("finality_effect_attempts_total", { outcome }),
    };
  }
}

/**
 * Every shard's counters summed into Prometheus text, or "" when a shard did not answer: a sum
 * without it would drop, which Prometheus reads as a counter reset (and `rate()` as a burst when
 * it comes back); a scrape without the series is only a gap.
 */
export function renderSummedCounters(perShard: readonly (CounterSample[] | null)[]): string {
  if (perShard.some((samples) => samples === null)) return "";
  const sums = new Map<string, Map<string, number>>();
  for (const samples of perShard)
    for (const { name, labels, value } of samples ?? []) {
      const series = sums.get(name) ?? new Map<string, number>();
      series.set(labels, (series.get(labels) ?? 0) + value);
      sums.set(name, series);
    }
  const lines: string[] = [];
  for (const [name, help] of Object.entries(DURABLE_COUNTERS)) {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} counter`);
    const series = [...(sums.get(name) ?? [])].sort(([a], [b]) => (a < b ? -1 : 1));
    for (const [labels, value] of series) lines.push(`${name}${labels} ${value}`);
  }
  return `${lines.join("\n")}\n`;
}
