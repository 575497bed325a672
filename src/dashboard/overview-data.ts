import type { Effect, Job } from "../core/model.js";
import { CANONICAL_STATES, type CanonicalState } from "../core/states.js";
import type { LatencySamples } from "../store/latency-reads.js";
import type { BoundedCount, TimeSeries, TimeWindow } from "../store/overview-reads.js";
import type { Store } from "../store/store.js";
import { type LatencyOverview, latencyOverview } from "./overview-latency.js";

/** Counts stop here ("10,000+"): each costs at most this many index entries. */
export const COUNT_CAP = 10_000;
/** The charts read at most this many rows of their hour. */
const CHART_CAP = 100_000;
/** Percentiles are taken over at most this many of the hour's newest samples of each kind. */
const LATENCY_CAP = 20_000;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

interface AgeBucket {
  label: string;
  count: BoundedCount;
}

export interface OverviewData {
  now: number;
  states: { state: CanonicalState; count: BoundedCount }[];
  open: BoundedCount;
  due: BoundedCount;
  stuck: BoundedCount;
  conflict: BoundedCount;
  anomaly: BoundedCount;
  ages: AgeBucket[];
  oldestOpen: Job[];
  stuckJobs: Job[];
  conflictJobs: Job[];
  anomalyJobs: Job[];
  effects: { pending: BoundedCount; delivering: BoundedCount; dead: BoundedCount };
  deadEffects: Effect[];
  window: TimeWindow;
  settlements: TimeSeries;
  webhooks: TimeSeries;
  latency: LatencyOverview;
}

/** Open jobs by how long ago they were submitted: [label, youngest age, oldest age). */
const AGES: [string, number, number][] = [
  ["under 1 min", 0, MINUTE],
  ["1–10 min", MINUTE, 10 * MINUTE],
  ["10–60 min", 10 * MINUTE, HOUR],
  ["1–6 h", HOUR, 6 * HOUR],
  ["6–24 h", 6 * HOUR, 24 * HOUR],
  ["over 24 h", 24 * HOUR, Number.POSITIVE_INFINITY],
];

/** The last hour, in whole minutes, ending with the current one. */
function lastHour(now: number): TimeWindow {
  const to = Math.floor(now / MINUTE) * MINUTE + MINUTE;
  return { from: to - HOUR, to, bucketMs: MINUTE, cap: CHART_CAP };
}

/**
 * What the overview is computed from: the results of its store reads, as they came (plain data,
 * so that a sharded ledger can read them on every shard and merge them, see
 * src/cloudflare/shard-overview-merge.ts).
 */
export interface OverviewParts extends Omit<OverviewData, "latency"> {
  samples: LatencySamples;
  /** False when the hour held more samples than were read. */
  samplesComplete: boolean;
  oldestByProvider: Record<string, number>;
}

/**
 * Everything the overview shows, from bounded reads only (see store/overview-reads.ts): about
 * thirty indexed queries, none of which grows with the number of jobs stored.
 */
export async function loadOverview(
  store: Store,
  now: number,
  providers: readonly string[] = [],
): Promise<OverviewData> {
  return overviewFromParts(await readOverviewParts(store, now, providers));
}

export function overviewFromParts(parts: OverviewParts): OverviewData {
  const { samples, samplesComplete, oldestByProvider, ...data } = parts;
  return {
    ...data,
    latency: { ...latencyOverview(samples, oldestByProvider, LATENCY_CAP), complete: samplesComplete },
  };
}

export async function readOverviewParts(
  store: Store,
  now: number,
  providers: readonly string[] = [],
): Promise<OverviewParts> {
  const count = (what: Parameters<Store["countJobs"]>[0]) => store.countJobs(what, COUNT_CAP);
  const window = lastHour(now);
  const [states, ages, open, due, stuck, conflict, anomaly] = await Promise.all([
    Promise.all(
      CANONICAL_STATES.map(async (state) => ({ state, count: await count({ of: "state", state }) })),
    ),
    Promise.all(
      AGES.map(async ([label, youngest, oldest]) => ({
        label,
        count: await count({
          of: "open",
          submittedFrom: Number.isFinite(oldest) ? now - oldest : undefined,
          submittedBefore: youngest === 0 ? undefined : now - youngest,
        }),
      })),
    ),
    count({ of: "open" }),
    count({ of: "due", now }),
    count({ of: "stuck" }),
    count({ of: "conflict" }),
    count({ of: "anomaly" }),
  ]);
  const [oldestOpen, stuckJobs, conflictJobs, anomalyJobs, pending, delivering, dead, deadEffects] =
    await Promise.all([
      store.oldestOpenJobs(5),
      store.listJobs({ stuck: true, limit: 5 }).then((page) => page.items),
      store.listFlaggedJobs("conflict", { limit: 5 }).then((page) => page.items),
      store.listFlaggedJobs("anomaly", { limit: 5 }).then((page) => page.items),
      store.countEffects("pending", COUNT_CAP),
      store.countEffects("delivering", COUNT_CAP),
      store.countEffects("dead", COUNT_CAP),
      store.listEffects({ status: "dead", limit: 5 }).then((page) => page.items),
    ]);
  const [settlements, webhooks, samples, oldestByProvider] = await Promise.all([
    store.settlementsOverTime(window),
    store.webhookOutcomesOverTime(window),
    store.latencySamples({ from: now - HOUR, to: now + 1, cap: LATENCY_CAP }),
    store.oldestOpenByProvider(providers),
  ]);
  return {
    now,
    states,
    open,
    due,
    stuck,
    conflict,
    anomaly,
    ages,
    oldestOpen,
    stuckJobs,
    conflictJobs,
    anomalyJobs,
    effects: { pending, delivering, dead },
    deadEffects,
    window,
    settlements,
    webhooks,
    samples,
    samplesComplete:
      samples.detection.length < LATENCY_CAP && samples.completionToEffect.length < LATENCY_CAP,
    oldestByProvider,
  };
}
