import type { Effect, IgnoreReason, Job } from "../core/model.js";

/** How one webhook request ended, as counted by `finality_webhooks_received_total{outcome}`. */
export type WebhookOutcome =
  | "applied"
  | IgnoreReason
  | "signature-invalid"
  | "malformed"
  | "too-large"
  | "unknown-provider"
  | "unavailable"
  | "error";

/**
 * What the app counts. The app depends on this interface only: the Prometheus implementation
 * (prom-metrics.ts) lives at the Node edge, and tests or other runtimes may pass their own.
 */
export interface ServiceMetrics {
  webhookReceived(provider: string, outcome: WebhookOutcome): void;
  /** Seconds from handing an observation to the ledger until its transaction committed. */
  ingestCommitted(seconds: number): void;
  eventRecorded(source: string, applied: boolean, reason: string | null): void;
  requestFinished(route: string, method: string, status: number): void;
  /** One reconcile poll, by provider instance and outcome (observed, not-found, failed, error). */
  pollFinished(provider: string, outcome: string): void;
  /**
   * One effect delivery attempt and how it ended (delivered, retry, dead, lost-claim);
   * for a delivered one, the seconds from the job's settling (the row's creation) to delivery;
   * `destination` is the effect's kind of destination (url, handler, nats, amqp, redis).
   */
  effectAttempted(outcome: string, settleToDeliveredSeconds?: number, destination?: string): void;
  /**
   * A job's first terminal state, just committed: the provider's completion time (its
   * `updateTime`) to Finality knowing it, by the source that settled it (webhook, reconcile, ...).
   */
  jobSettled(job: Job): void;
  /** An effect delivered at `at`: the provider's completion time of its job to now, by provider and effect. */
  effectDelivered(effect: Effect, job: Job, at: number): void;
  /** Rows a retention pass deleted from one table. */
  rowsPruned(table: string, rows: number): void;
  /**
   * Jobs a discovery sweep adopted, with the seconds from each one's creation at the provider to
   * Finality first knowing it.
   */
  jobsDiscovered(provider: string, lagSeconds: readonly number[]): void;
  /** Prometheus text exposition, with gauges read from the store at scrape time. */
  render(): Promise<{ contentType: string; body: string }>;
}

export const noopMetrics: ServiceMetrics = {
  webhookReceived() {},
  ingestCommitted() {},
  eventRecorded() {},
  requestFinished() {},
  pollFinished() {},
  effectAttempted() {},
  jobSettled() {},
  effectDelivered() {},
  rowsPruned() {},
  jobsDiscovered() {},
  render: async () => ({ contentType: "text/plain; version=0.0.4", body: "" }),
};
