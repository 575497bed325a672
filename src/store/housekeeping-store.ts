/** What retention prunes; each target has its own window in the `retention` config. */
export const PRUNE_TARGETS = [
  "deliveries",
  "events",
  "settledJobs",
  "deliveredEffects",
  "settledRuns",
  "tombstones",
  "parked",
  "settlements",
] as const;
export type PruneTarget = (typeof PRUNE_TARGETS)[number];

export interface HousekeepingStats {
  /** Bytes the database takes (SQLite: the file's pages; PostgreSQL: the schema's relations). */
  sizeBytes: number;
  /** Bytes free for reuse inside the file (SQLite's freelist); 0 where not applicable. */
  freeBytes: number;
  /** Epoch ms of the oldest prunable row of each target; null when there is none. */
  oldest: Record<PruneTarget, number | null>;
}

/**
 * Retention, behind the store port. What each target removes, and what it never touches:
 * - deliveries: delivery ids received before `before` (a later redelivery would be applied again,
 *   so the window must outlive every sender's retries);
 * - events: audit events recorded before `before`;
 * - settledJobs: jobs settled before `before` whose effects are all delivered — never an open job,
 *   never one with a pending, in-flight or dead effect; each leaves a tombstone in the same
 *   transaction (lifecycle-store.ts);
 * - deliveredEffects: outbox rows delivered before `before` — never pending, in-flight or dead ones;
 * - settledRuns: runs settled before `before`, with their attempts and run events;
 * - tombstones: tombstones of jobs settled before `before` (their own, longer window);
 * - parked: observations parked before `before` whose job was never registered;
 * - settlements: settlement feed rows of jobs settled before `before` (a consumer whose cursor is
 *   older than the window misses those; the rest of the feed and its cursors are unchanged).
 */
export interface HousekeepingStore {
  /** Deletes up to `limit` of the oldest rows of `target` older than `before`; returns how many. */
  prune(target: PruneTarget, before: number, limit: number): Promise<number>;
  /** How many rows `prune` would delete for `target` and `before` (for dry runs). */
  countPrunable(target: PruneTarget, before: number): Promise<number>;
  housekeepingStats(): Promise<HousekeepingStats>;
  /** Gives freed space back where the store can do it cheaply (SQLite incremental vacuum). */
  reclaim(maxPages?: number): Promise<number>;
}
