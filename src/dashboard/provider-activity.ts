import type { ServiceMetrics } from "../http/service-metrics.js";

/** When something last happened for a provider instance, and how it ended. */
export interface ActivityMark {
  /** Epoch milliseconds. */
  at: number;
  /** The metrics' outcome: `applied`, `signature-invalid`, ... for a webhook; `observed`, `failed`, ... for a poll. */
  outcome: string;
}

/**
 * Each provider instance's last webhook and last poll, for the dashboard's configuration page.
 * Kept in memory by this process (since it started), not in the ledger: a refused webhook and a
 * failed poll never reach the ledger, and they are what a person setting up a provider needs to
 * see. It listens where the metrics are counted, so every path that counts one records one.
 */
export interface ProviderActivity {
  lastWebhook(provider: string): ActivityMark | undefined;
  lastPoll(provider: string): ActivityMark | undefined;
  /** The same metrics, also recording each webhook and poll of a configured provider here. */
  observe(metrics: ServiceMetrics): ServiceMetrics;
}

export function createProviderActivity(providers: readonly string[], now: () => number): ProviderActivity {
  // Only configured names: a webhook to /webhooks/<anything> must not grow this map.
  const known = new Set(providers);
  const webhooks = new Map<string, ActivityMark>();
  const polls = new Map<string, ActivityMark>();
  // A webhook's mark is taken once per event-loop turn (a group commit answers its callers in
  // one turn): the turn's last outcome per provider, stamped with one clock read.
  const turn = new Map<string, string>();
  const stamp = () => {
    if (turn.size === 0) return;
    const at = now();
    for (const [provider, outcome] of turn) webhooks.set(provider, { at, outcome });
    turn.clear();
  };
  return {
    lastWebhook: (provider) => {
      stamp();
      return webhooks.get(provider);
    },
    lastPoll: (provider) => polls.get(provider),
    observe(metrics) {
      return {
        ...metrics,
        webhookReceived(provider, outcome) {
          if (known.has(provider)) {
            if (turn.size === 0) setImmediate(stamp);
            turn.set(provider, outcome);
          }
          metrics.webhookReceived(provider, outcome);
        },
        pollFinished(provider, outcome) {
          if (known.has(provider)) polls.set(provider, { at: now(), outcome });
          metrics.pollFinished(provider, outcome);
        },
        // Methods that read `this` keep the original as their receiver.
        ingestCommitted: (seconds) => metrics.ingestCommitted(seconds),
        eventRecorded: (source, applied, reason) => metrics.eventRecorded(source, applied, reason),
        requestFinished: (route, method, status) => metrics.requestFinished(route, method, status),
        effectAttempted: (outcome, seconds, destination) =>
          metrics.effectAttempted(outcome, seconds, destination),
        jobSettled: (job) => metrics.jobSettled(job),
        effectDelivered: (effect, job, at) => metrics.effectDelivered(effect, job, at),
        rowsPruned: (table, rows) => metrics.rowsPruned(table, rows),
        render: () => metrics.render(),
      };
    },
  };
}
