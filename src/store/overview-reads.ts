import type { EffectStatus, Job } from "../core/model.js";
import type { CanonicalState } from "../core/states.js";
import type { Page } from "./page.js";

/**
 * Reads for the dashboard's overview and the CLI: each is answered from one index, and costs at
 * most what its cap or time window holds, never what the whole store holds. With a million
 * jobs stored, a view that counts "everything" on every refresh would scan them all each time;
 * these stop at the cap (the dashboard then shows "10,000+") or read only a recent window.
 */
export interface OverviewReads {
  /** Jobs matching `what`, counted on its index up to `cap`. */
  countJobs(what: JobCount, cap: number): Promise<BoundedCount>;
  /** Outbox rows in `status`, counted up to `cap`. */
  countEffects(status: EffectStatus, cap: number): Promise<BoundedCount>;
  /** The open jobs submitted longest ago, oldest first. */
  oldestOpenJobs(limit: number): Promise<Job[]>;
  /** Jobs flagged with a conflicting terminal observation or a provider anomaly, newest first. */
  listFlaggedJobs(flag: JobFlag, page?: { limit?: number; cursor?: string }): Promise<Page<Job>>;
  /** Jobs that settled in the window, per bucket and per source that settled them (`settledBy`). */
  settlementsOverTime(window: TimeWindow): Promise<TimeSeries>;
  /**
   * Webhook observations recorded in the window (signed ones: refused webhooks never reach the
   * ledger), per bucket and outcome: `applied`, or the reason they were not (`duplicate-delivery`,
   * `stale`, ...).
   */
  webhookOutcomesOverTime(window: TimeWindow): Promise<TimeSeries>;
}

export type JobFlag = "conflict" | "anomaly";

/** What to count; each case has its own index. */
export type JobCount =
  | { of: "state"; state: CanonicalState }
  /** Open (not settled) jobs, optionally only those submitted in [submittedFrom, submittedBefore). */
  | { of: "open"; submittedFrom?: number | undefined; submittedBefore?: number | undefined }
  | { of: "stuck" }
  | { of: JobFlag }
  /** Open jobs whose reconcile check is due at `now`. */
  | { of: "due"; now: number };

export interface BoundedCount {
  /** Exact when `capped` is false; otherwise the cap. */
  count: number;
  /** True when at least `cap` rows matched: "cap or more". */
  capped: boolean;
}

export interface TimeWindow {
  /** Epoch ms, inclusive. */
  from: number;
  /** Epoch ms, exclusive. */
  to: number;
  bucketMs: number;
  /** Most rows read: the newest ones in the window. */
  cap: number;
}

export interface TimeBucket {
  /** Start of the bucket: `from + n * bucketMs`. */
  start: number;
  /** What the rows are grouped by (a source, an outcome). */
  key: string;
  count: number;
}

export interface TimeSeries {
  /** Non-empty buckets only, by start then key. */
  buckets: TimeBucket[];
  /** False when the window held more than `cap` rows: only the newest `cap` were counted. */
  complete: boolean;
}

/** Sorts buckets and decides completeness the same way in every adapter. */
export function timeSeries(buckets: TimeBucket[], cap: number): TimeSeries {
  const total = buckets.reduce((sum, bucket) => sum + bucket.count, 0);
  buckets.sort((a, b) => a.start - b.start || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return { buckets, complete: total < cap };
}
