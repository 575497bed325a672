import type { Effect, Job } from "../core/model.js";
import type { OverviewParts } from "../dashboard/overview-data.js";
import type { BoundedCount, TimeSeries } from "../store/overview-reads.js";
import { timeSeries } from "../store/overview-reads.js";

/** How many jobs and effects each list of the overview shows (what every shard read). */
const LIST_ROWS = 5;

/**
 * The overview's reads over every shard, as one: counts summed ("cap or more" when any shard hit
 * its cap), the short lists merged and cut to what one shard shows, the charts' buckets summed,
 * the latency samples pooled (percentiles are taken over all of them), each provider's oldest
 * open job the oldest of any shard. Every part was read at the same `now`.
 */
export function mergeOverviewParts(parts: readonly OverviewParts[]): OverviewParts {
  const [first, ...rest] = parts;
  if (first === undefined) throw new Error("no shard to merge");
  if (rest.length === 0) return first;
  const newest = <T>(lists: T[][], at: (item: T) => number) =>
    lists
      .flat()
      .sort((a, b) => at(b) - at(a))
      .slice(0, LIST_ROWS);
  const all = <K extends keyof OverviewParts>(key: K) => parts.map((p) => p[key]);
  const oldestByProvider: Record<string, number> = {};
  for (const part of parts)
    for (const [provider, at] of Object.entries(part.oldestByProvider))
      oldestByProvider[provider] = Math.min(oldestByProvider[provider] ?? at, at);
  return {
    now: first.now,
    window: first.window,
    states: first.states.map(({ state }, i) => ({
      state,
      count: sum(parts.map((p) => p.states[i]?.count)),
    })),
    ages: first.ages.map(({ label }, i) => ({ label, count: sum(parts.map((p) => p.ages[i]?.count)) })),
    open: sum(all("open")),
    due: sum(all("due")),
    stuck: sum(all("stuck")),
    conflict: sum(all("conflict")),
    anomaly: sum(all("anomaly")),
    oldestOpen: (all("oldestOpen") as Job[][])
      .flat()
      .sort((a, b) => a.submittedAt - b.submittedAt)
      .slice(0, LIST_ROWS),
    stuckJobs: newest(all("stuckJobs") as Job[][], (j) => j.submittedAt),
    conflictJobs: newest(all("conflictJobs") as Job[][], (j) => j.submittedAt),
    anomalyJobs: newest(all("anomalyJobs") as Job[][], (j) => j.submittedAt),
    effects: {
      pending: sum(parts.map((p) => p.effects.pending)),
      delivering: sum(parts.map((p) => p.effects.delivering)),
      dead: sum(parts.map((p) => p.effects.dead)),
    },
    deadEffects: newest(all("deadEffects") as Effect[][], (e) => e.createdAt),
    settlements: sumSeries(all("settlements") as TimeSeries[]),
    webhooks: sumSeries(all("webhooks") as TimeSeries[]),
    samples: {
      detection: parts.flatMap((p) => p.samples.detection),
      completionToEffect: parts.flatMap((p) => p.samples.completionToEffect),
    },
    samplesComplete: parts.every((p) => p.samplesComplete),
    oldestByProvider,
  };
}

export function sum(counts: readonly (BoundedCount | undefined)[]): BoundedCount {
  let count = 0;
  let capped = false;
  for (const c of counts) {
    count += c?.count ?? 0;
    capped ||= c?.capped ?? false;
  }
  return { count, capped };
}

/** Buckets of the same minute and key added up; complete only when every shard's was. */
function sumSeries(series: readonly TimeSeries[]): TimeSeries {
  const byBucket = new Map<string, { start: number; key: string; count: number }>();
  for (const { buckets } of series)
    for (const bucket of buckets) {
      const id = `${bucket.start}\u0000${bucket.key}`;
      const into = byBucket.get(id);
      if (into) into.count += bucket.count;
      else byBucket.set(id, { ...bucket });
    }
  // Sorted as one store sorts them; each shard applied the cap to its own rows.
  const merged = timeSeries([...byBucket.values()], Number.POSITIVE_INFINITY);
  return { buckets: merged.buckets, complete: series.every((s) => s.complete) };
}
