import { createIntervalLoop, type IntervalLoop } from "../core/interval-loop.js";
import { yieldToEventLoop } from "../core/yield.js";
import { PRUNE_TARGETS, type PruneTarget } from "../store/housekeeping-store.js";
import type { Store } from "../store/store.js";

const DAY_MS = 86_400_000;

/** How long each kind of row is kept, in days (fractions allowed, e.g. for tests). */
export interface RetentionWindows {
  deliveriesDays: number;
  eventsDays: number;
  settledJobsDays: number;
  deliveredEffectsDays: number;
  settledRunsDays: number;
  /**
   * How long a pruned job's tombstone is kept, counted from when the job settled: until then a
   * late webhook or a replayed one for it is `already-settled-pruned` and fires nothing.
   */
  tombstonesDays: number;
  /** How long an observation parked for an unregistered job (`registered-only`) waits for it. */
  parkedDays: number;
  /** How long the settlement feed keeps a settlement, counted from when the job settled. */
  settlementsDays: number;
  /**
   * The longest time after settlement in which a pruned job can come back besides a redelivery
   * (`deliveriesDays`, always counted): a discovery sweep's lookback, a webhook's signature
   * tolerance. The hosts pass `longestComeBackDays(config)` (config/tombstone-cover.ts).
   */
  comeBackDays?: number | undefined;
}

export const DEFAULT_RETENTION: RetentionWindows = {
  deliveriesDays: 7,
  eventsDays: 14,
  settledJobsDays: 14,
  deliveredEffectsDays: 14,
  settledRunsDays: 14,
  tombstonesDays: 400,
  parkedDays: 7,
  settlementsDays: 14,
};

const WINDOW_OF: Record<PruneTarget, Exclude<keyof RetentionWindows, "comeBackDays">> = {
  deliveries: "deliveriesDays",
  events: "eventsDays",
  settledJobs: "settledJobsDays",
  deliveredEffects: "deliveredEffectsDays",
  settledRuns: "settledRunsDays",
  tombstones: "tombstonesDays",
  parked: "parkedDays",
  settlements: "settlementsDays",
};

export interface PruneOptions {
  /** Rows per transaction: small, so that no batch holds the write lock long (default 500). */
  batchSize?: number;
  /** Batches per target in this pass (default: until none is left); the rest waits for the next pass. */
  maxBatches?: number;
  /** Count what would go, delete nothing. */
  dryRun?: boolean;
  /** After each batch (or each count, in a dry run). */
  onProgress?: (target: PruneTarget, rows: number) => void;
}

export type PruneCounts = Record<PruneTarget, number>;

/**
 * The window tombstones are actually pruned after: `tombstonesDays`, and never less than the job's
 * own window plus every way it can still come back (config/tombstone-cover.ts). The config check
 * refuses a shorter `tombstonesDays`; this is the same rule once more, inside the pass, for the
 * windows that never went through it (`finality.prune({retention})`, a library's own loop): a
 * tombstone pruned with its job would let a replay or a sweep bring the job back and fire its
 * effects again.
 */
function tombstoneWindowDays(windows: RetentionWindows): number {
  const comeBack = Math.max(windows.deliveriesDays, windows.comeBackDays ?? 0);
  return Math.max(windows.tombstonesDays, windows.settledJobsDays + comeBack);
}

function windowDays(target: PruneTarget, windows: RetentionWindows): number {
  return target === "tombstones" ? tombstoneWindowDays(windows) : windows[WINDOW_OF[target]];
}

/**
 * One retention pass: for each target, deletes its rows older than its window in small batches,
 * yielding to the event loop between batches so that ingest transactions interleave with them,
 * then gives freed pages back where the store can.
 */
export async function pruneOnce(
  store: Store,
  windows: RetentionWindows,
  now: number,
  options: PruneOptions = {},
): Promise<PruneCounts> {
  const batchSize = options.batchSize ?? 500;
  const counts = Object.fromEntries(PRUNE_TARGETS.map((t) => [t, 0])) as PruneCounts;
  for (const target of PRUNE_TARGETS) {
    const before = now - windowDays(target, windows) * DAY_MS;
    if (options.dryRun) {
      counts[target] = await store.countPrunable(target, before);
      options.onProgress?.(target, counts[target]);
      continue;
    }
    for (let batch = 1; ; batch++) {
      const deleted = await store.prune(target, before, batchSize);
      counts[target] += deleted;
      if (deleted > 0) options.onProgress?.(target, deleted);
      if (deleted < batchSize || batch >= (options.maxBatches ?? Number.POSITIVE_INFINITY)) break;
      await yieldToEventLoop();
    }
  }
  if (!options.dryRun) await store.reclaim();
  return counts;
}

export type RetentionLoop = IntervalLoop;

/** Runs `pruneOnce` every `intervalMs` inside `finality serve`. */
export function createRetentionLoop(
  store: Store,
  windows: RetentionWindows,
  options: {
    intervalMs: number;
    now: () => number;
    batchSize?: number;
    onPass?: (counts: PruneCounts) => void;
    onError?: (error: Error) => void;
  },
): RetentionLoop {
  return createIntervalLoop(
    async () => {
      const counts = await pruneOnce(store, windows, options.now(), { batchSize: options.batchSize ?? 500 });
      options.onPass?.(counts);
    },
    options.intervalMs,
    options.onError,
  );
}
