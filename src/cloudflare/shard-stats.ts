import type { StoreStats } from "../store/store.js";
import type { SendToShard } from "./shard-lists.js";

/** The counts of one shard, as the ledger object answers them on STATS_PATH. */
export interface ShardStats extends StoreStats {
  databaseBytes: number;
}

interface ShardReport {
  name: string;
  layout: "current" | "previous" | "runs";
  stats: ShardStats | null;
  /** Why the shard did not answer; null when it did. */
  error: string | null;
}

interface ShardsOverview {
  shards: ShardReport[];
  /** The sums over every shard that answered. */
  total: Omit<ShardStats, "databaseBytes"> & { databaseBytes: number };
  /** False when a shard did not answer (the totals then leave it out). */
  complete: boolean;
}

/** Reads every shard's counts at once; one that fails is reported, not fatal. */
export async function shardsOverview(
  shards: readonly { name: string; layout: ShardReport["layout"] }[],
  statsRequest: () => Request,
  send: SendToShard,
): Promise<ShardsOverview> {
  const reports = await Promise.all(
    shards.map(async ({ name, layout }): Promise<ShardReport> => {
      try {
        const response = await send(name, statsRequest());
        if (!response.ok)
          return { name, layout, stats: null, error: `${response.status} ${await response.text()}` };
        return { name, layout, stats: (await response.json()) as ShardStats, error: null };
      } catch (error) {
        return { name, layout, stats: null, error: String(error) };
      }
    }),
  );
  const total: ShardsOverview["total"] = {
    jobsByState: {},
    openJobs: 0,
    stuckJobs: 0,
    conflictJobs: 0,
    effectsByStatus: {},
    oldestOpenSubmittedAt: null,
    dueJobs: 0,
    databaseBytes: 0,
  };
  for (const { stats } of reports) {
    if (stats === null) continue;
    addInto(total.jobsByState, stats.jobsByState);
    addInto(total.effectsByStatus, stats.effectsByStatus);
    total.openJobs += stats.openJobs;
    total.stuckJobs += stats.stuckJobs;
    total.conflictJobs += stats.conflictJobs;
    total.dueJobs += stats.dueJobs;
    total.databaseBytes += stats.databaseBytes;
    const oldest = stats.oldestOpenSubmittedAt;
    if (oldest !== null && (total.oldestOpenSubmittedAt === null || oldest < total.oldestOpenSubmittedAt))
      total.oldestOpenSubmittedAt = oldest;
  }
  return { shards: reports, total, complete: reports.every((r) => r.error === null) };
}

function addInto(into: Record<string, number>, from: Record<string, number>): void {
  for (const [key, n] of Object.entries(from)) into[key] = (into[key] ?? 0) + n;
}

/**
 * The ledger gauges of `finality serve`'s /metrics, summed over the shards, plus one
 * `finality_shard_up` per shard. The counters are rendered after these, summed
 * from each shard's own storage (durable-counters.ts).
 */
export function renderShardMetrics(overview: ShardsOverview, now: number): string {
  const { total } = overview;
  const lines: string[] = [];
  const gauge = (name: string, help: string, samples: [string, number][]) => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`);
    for (const [labels, value] of samples) lines.push(`${name}${labels} ${value}`);
  };
  const labelled = (label: string, counts: Record<string, number>): [string, number][] =>
    Object.entries(counts)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([key, n]) => [`{${label}="${escapeLabel(key)}"}`, n]);
  gauge("finality_open_jobs", "Jobs not in a terminal state, over every shard.", [["", total.openJobs]]);
  gauge("finality_jobs", "Jobs by state, over every shard.", labelled("state", total.jobsByState));
  gauge("finality_anomalies", "Jobs flagged stuck or conflicting, over every shard.", [
    ['{kind="stuck"}', total.stuckJobs],
    ['{kind="conflict"}', total.conflictJobs],
  ]);
  gauge(
    "finality_effects",
    "Outbox rows by status, over every shard.",
    labelled("status", total.effectsByStatus),
  );
  const oldest = total.oldestOpenSubmittedAt;
  gauge("finality_oldest_open_job_age_seconds", "Age of the oldest open job.", [
    ["", oldest === null ? 0 : Math.max(0, (now - oldest) / 1000)],
  ]);
  gauge("finality_due_jobs", "Open jobs due for a status poll, over every shard.", [["", total.dueJobs]]);
  gauge("finality_database_bytes", "Bytes the shards' SQLite databases take.", [["", total.databaseBytes]]);
  gauge(
    "finality_shard_up",
    "1 when the ledger shard answered this scrape.",
    overview.shards.map((s) => [
      `{shard="${escapeLabel(s.name)}",layout="${s.layout}"}`,
      s.error === null ? 1 : 0,
    ]),
  );
  return `${lines.join("\n")}\n`;
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}
