/**
 * The latency that matters, read from stored rows (so every replica, and the dashboard of any
 * of them, agrees): how long after the provider's completion (a job's `max_update_time`, the
 * provider's own time of its last update) Finality knew (`settled_at`, by `settled_by`), and its
 * effects were delivered (`delivered_at`). Jobs whose provider gave no time are left out.
 */
export interface LatencyReads {
  /** The newest `cap` samples of each kind in [from, to), by the settling or delivery time. */
  latencySamples(window: { from: number; to: number; cap: number }): Promise<LatencySamples>;
  /** Submission time (epoch ms) of each provider's oldest open job; providers with none are absent. */
  oldestOpenByProvider(providers: readonly string[]): Promise<Record<string, number>>;
}

export interface LatencySamples {
  /** Provider completion to Finality knowing it. */
  detection: { provider: string; source: string; ms: number }[];
  /** Provider completion to the effect delivered. */
  /** `source`: what settled the job (so a lost webhook's cost shows as the reconcile rows). */
  completionToEffect: { provider: string; effect: string; source: string; ms: number }[];
}
