import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { DestinationStatus } from "../engine/effect-target.js";
import type { HousekeepingStats } from "../store/housekeeping-store.js";
import type { PoolStats } from "../store/postgres/postgres-client.js";
import type { GroupCommitStats } from "../store/postgres/postgres-group-commit.js";
import type { StoreStats } from "../store/store.js";
import type { ServiceMetrics, WebhookOutcome } from "./service-metrics.js";

/** Counts not yet handed to prom-client, for one label set of one counter. */
interface Tally {
  readonly child: Counter.Internal;
  n: number;
}

interface PromMetricsOptions {
  /** Read at every scrape for the gauges (open jobs, anomalies, outbox). */
  stats: () => Promise<StoreStats>;
  /** Read at every scrape for the database size and the oldest row per table. */
  housekeeping?: () => Promise<HousekeepingStats>;
  /** Intents flagged orphaned and still without a remote id, read at every scrape. */
  orphanedIntents?: () => Promise<number>;
  /** The PostgreSQL pool's counters, read at every scrape (none on SQLite). */
  pool?: () => PoolStats;
  /** The PostgreSQL group commit's counters, read at every scrape (none on SQLite). */
  groupCommit?: () => GroupCommitStats;
  /** The broker destinations' connections, read at every scrape (none without broker effects). */
  destinations?: () => DestinationStatus[];
  /** Read at every scrape: submission time of each provider's oldest open job. */
  oldestOpenByProvider?: () => Promise<Record<string, number>>;
  now?: () => number;
  /** Process metrics (CPU, RSS, event loop lag); on by default. */
  processMetrics?: boolean;
}

/**
 * Prometheus metrics on a registry of their own (never prom-client's global one, so that two
 * instances in one process, as in tests, do not collide). Counters move as requests finish;
 * gauges are computed from the store when scraped, so they cannot drift from the ledger.
 */
export function createPromMetrics(options: PromMetricsOptions): ServiceMetrics & { registry: Registry } {
  const registry = new Registry();
  const now = options.now ?? Date.now;
  if (options.processMetrics !== false) collectDefaultMetrics({ register: registry, prefix: "finality_" });

  // Every metric on this registry, defined in the order /metrics lists them. The label names'
  // literal types reach `labels()`, so a misspelt label is a type error.
  const counter = <L extends string = string>(name: string, help: string, labelNames: readonly L[] = []) =>
    new Counter<L>({ name, help, labelNames, registers: [registry] });
  const gauge = <L extends string = string>(name: string, help: string, labelNames: readonly L[] = []) =>
    new Gauge<L>({ name, help, labelNames, registers: [registry] });
  const histogram = <L extends string = string>(
    name: string,
    help: string,
    buckets: number[],
    labelNames: readonly L[] = [],
  ) => new Histogram<L>({ name, help, buckets, labelNames, registers: [registry] });

  const webhooks = counter(
    "finality_webhooks_received_total",
    "Webhooks received, by provider instance and outcome (applied, an ignore reason, or why refused).",
    ["provider", "outcome"],
  );
  const ingestSeconds = histogram(
    "finality_ingest_duration_seconds",
    "Time from handing an observation to the ledger until its transaction committed.",
    [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  );
  const applied = counter("finality_events_applied_total", "Observations that changed a job, by source.", [
    "source",
  ]);
  const ignored = counter(
    "finality_events_ignored_total",
    "Observations recorded without changing a job, by source and reason.",
    ["source", "reason"],
  );
  const requests = counter(
    "finality_http_requests_total",
    "HTTP requests answered, by route pattern, method and status.",
    ["route", "method", "status"],
  );
  const openJobs = gauge("finality_open_jobs", "Jobs not in a terminal state.");
  const jobs = gauge("finality_jobs", "Jobs by state.", ["state"]);
  const anomalies = gauge("finality_anomalies", "Jobs flagged for attention, by kind (stuck, conflict).", [
    "kind",
  ]);
  const effects = gauge("finality_effects", "Outbox rows by status.", ["status"]);
  const oldestOpen = gauge(
    "finality_oldest_open_job_age_seconds",
    "Age of the oldest open job (0 when none).",
  );
  const dueJobs = gauge("finality_due_jobs", "Open jobs due for a reconcile poll.");
  const databaseBytes = gauge("finality_database_bytes", "Bytes the database takes.");
  const freeBytes = gauge("finality_database_free_bytes", "Bytes free for reuse inside the database file.");
  const oldestRow = gauge(
    "finality_oldest_row_age_seconds",
    "Age of the oldest prunable row, by table (0 when none).",
    ["table"],
  );
  const polls = counter(
    "finality_polls_total",
    "Reconcile polls, by provider instance and outcome (observed, not-found, failed, error).",
    ["provider", "outcome"],
  );
  const effectAttempts = counter(
    "finality_effect_attempts_total",
    "Effect delivery attempts, by outcome (delivered, retry, dead, lost-claim).",
    ["outcome"],
  );
  const destinationAttempts = counter(
    "finality_effect_destination_attempts_total",
    "Effect delivery attempts, by destination (url, handler, nats, amqp, redis) and outcome.",
    ["destination", "outcome"],
  );
  const destinationConnected = gauge(
    "finality_effect_destination_connected",
    "1 while a broker effect's connection is up, 0 while it is down or not yet opened; by effect and destination.",
    ["effect", "destination"],
  );
  const settleToDelivered = histogram(
    "finality_effect_delivery_delay_seconds",
    "Time from a job settling (its effect row written) to the effect being delivered.",
    [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120, 600, 3600, 21600, 86400],
  );
  // From seconds to days: a webhook lost and caught by reconcile takes minutes to hours.
  const latencyBuckets = [
    0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 21600, 86400,
  ];
  const completionToEffect = histogram(
    "finality_completion_to_effect_seconds",
    "The provider's completion time (its updateTime) to the effect being delivered, by provider and effect.",
    latencyBuckets,
    ["provider", "effect"],
  );
  const detectionDelay = histogram(
    "finality_detection_delay_seconds",
    "The provider's completion time (its updateTime) to Finality knowing it, by provider and source (webhook, reconcile, discovery).",
    latencyBuckets,
    ["provider", "source"],
  );
  const oldestOpenByProvider = gauge(
    "finality_open_jobs_oldest_age_seconds",
    "Age of each provider's oldest open job (0 when it has none).",
    ["provider"],
  );
  const orphanedIntents = gauge(
    "finality_intents_orphaned",
    "Submission intents flagged orphaned (no remote id after their timeout) and still not attached.",
  );
  const discovered = counter(
    "finality_jobs_discovered_total",
    "Jobs a discovery sweep found at the provider and adopted, by provider instance.",
    ["provider"],
  );
  const discoveryLag = histogram(
    "finality_job_discovery_lag_seconds",
    "Time from a job's creation at the provider to Finality first knowing it (jobs found by discovery).",
    [1, 5, 30, 60, 300, 900, 3600, 10800, 43200, 86400, 172800],
    ["provider"],
  );
  const pruned = counter("finality_rows_pruned_total", "Rows deleted by retention, by table.", ["table"]);

  // The pool's counts live in the store (it sees every checkout); a scrape copies them, first, so
  // that they are there even when the database is too starved to answer the stats query.
  const poolConnections = gauge(
    "finality_db_pool_connections",
    "PostgreSQL pool connections, by state (idle, busy).",
    ["state"],
  );
  const poolWaiting = gauge(
    "finality_db_pool_waiting",
    "Callers waiting for a pooled PostgreSQL connection now.",
  );
  const poolEvents = gauge(
    "finality_db_pool_events_total",
    "PostgreSQL pool events since start: wait (no idle connection), wait-timeout (gave up: 503), " +
      "statement-timeout, lock-timeout, connection-error (a connection died under a caller).",
    ["event"],
  );

  // Counted in the store since it opened; each scrape adds what is new, so these are true counters.
  const groupBatches = counter(
    "finality_group_commit_batches_total",
    "PostgreSQL group commit transactions that held more than one caller.",
  );
  const groupCallers = counter(
    "finality_group_commit_callers_total",
    "Callers (ingests, polls, registrations) that shared a group commit transaction with others.",
  );
  const groupLargest = gauge(
    "finality_group_commit_largest_batch",
    "Most callers one PostgreSQL group commit transaction has held since start.",
  );
  const groupRetries = counter(
    "finality_group_commit_retries_total",
    "Callers' work run again inside a group commit, by reason (deadlock, serialization, version-conflict, lock-busy, not-last).",
    ["reason"],
  );
  // The last total copied per counter and label set: a scrape adds the difference.
  const copied = new Map<Counter<string>, Map<string, number>>();
  function copyCount(target: Counter<string>, total: number, labels: Record<string, string> = {}): void {
    const seen = copied.get(target) ?? new Map<string, number>();
    copied.set(target, seen);
    const key = JSON.stringify(labels);
    const delta = total - (seen.get(key) ?? 0);
    seen.set(key, total);
    // inc(0) too, so that a reason with no retries yet shows as 0 rather than missing.
    target.inc(labels, Math.max(0, delta));
  }

  function refreshGroupCommit(): void {
    if (!options.groupCommit) return;
    const group = options.groupCommit();
    copyCount(groupBatches, group.batches);
    copyCount(groupCallers, group.batchedCallers);
    groupLargest.set(group.largestBatch);
    for (const [reason, count] of Object.entries(group.retries)) copyCount(groupRetries, count, { reason });
  }

  function refreshPool(): void {
    if (!options.pool) return;
    const pool = options.pool();
    poolConnections.set({ state: "idle" }, pool.idle);
    poolConnections.set({ state: "busy" }, pool.total - pool.idle);
    poolWaiting.set(pool.waiting);
    poolEvents.set({ event: "wait" }, pool.waits);
    poolEvents.set({ event: "wait-timeout" }, pool.waitTimeouts);
    poolEvents.set({ event: "statement-timeout" }, pool.statementTimeouts);
    poolEvents.set({ event: "lock-timeout" }, pool.lockTimeouts);
    poolEvents.set({ event: "connection-error" }, pool.connectionErrors);
  }

  async function refreshGauges(): Promise<void> {
    refreshPool();
    refreshGroupCommit();
    for (const { effect, destination, connected } of options.destinations?.() ?? [])
      destinationConnected.set({ effect, destination }, connected ? 1 : 0);
    const stats = await options.stats();
    openJobs.set(stats.openJobs);
    jobs.reset();
    for (const [state, count] of Object.entries(stats.jobsByState)) jobs.set({ state }, count);
    anomalies.set({ kind: "stuck" }, stats.stuckJobs);
    anomalies.set({ kind: "conflict" }, stats.conflictJobs);
    effects.reset();
    for (const [status, count] of Object.entries(stats.effectsByStatus)) effects.set({ status }, count);
    oldestOpen.set(
      stats.oldestOpenSubmittedAt === null ? 0 : Math.max(0, (now() - stats.oldestOpenSubmittedAt) / 1000),
    );
    dueJobs.set(stats.dueJobs);
    if (options.oldestOpenByProvider) {
      const oldest = await options.oldestOpenByProvider();
      oldestOpenByProvider.reset();
      for (const [provider, at] of Object.entries(oldest))
        oldestOpenByProvider.set({ provider }, Math.max(0, (now() - at) / 1000));
    }
    if (options.orphanedIntents) orphanedIntents.set(await options.orphanedIntents());
    if (options.housekeeping) {
      const housekeeping = await options.housekeeping();
      databaseBytes.set(housekeeping.sizeBytes);
      freeBytes.set(housekeeping.freeBytes);
      for (const [table, at] of Object.entries(housekeeping.oldest))
        oldestRow.set({ table }, at === null ? 0 : Math.max(0, (now() - at) / 1000));
    }
  }

  // prom-client hashes and validates a label object on every inc(), a few thousand instructions
  // each, three times a webhook. The hot path counts in plain numbers instead, on a tally per
  // label set (resolved once, looked up by a string key), and hands the counts to prom-client
  // once per event-loop turn (a group commit answers all its callers in one turn) and before
  // every scrape, so /metrics never lags what was answered.
  const webhookTallies = new Map<string, Tally>();
  const requestTallies = new Map<string, Tally>();
  const appliedTallies = new Map<string, Tally>();
  const ignoredTallies = new Map<string, Tally>();
  // An effect attempt counts twice (by outcome, by destination and outcome): one in three
  // webhooks settles a job with an effect under the benchmarks' load.
  const attemptTallies = new Map<string, Tally>();
  const destinationTallies = new Map<string, Tally>();
  let moved: Tally[] = [];
  let flushScheduled = false;
  function flushTallies(): void {
    flushScheduled = false;
    const tallies = moved;
    moved = [];
    for (const tally of tallies) {
      tally.child.inc(tally.n);
      tally.n = 0;
    }
  }
  function count(tallies: Map<string, Tally>, key: string, child: () => Counter.Internal): void {
    let tally = tallies.get(key);
    if (tally === undefined) {
      tally = { child: child(), n: 0 };
      tallies.set(key, tally);
    }
    if (tally.n++ === 0) moved.push(tally);
    if (!flushScheduled) {
      flushScheduled = true;
      setImmediate(flushTallies);
    }
  }

  return {
    registry,
    webhookReceived(provider: string, outcome: WebhookOutcome) {
      count(webhookTallies, `${provider} ${outcome}`, () => webhooks.labels({ provider, outcome }));
    },
    ingestCommitted(seconds: number) {
      ingestSeconds.observe(seconds);
    },
    eventRecorded(source: string, wasApplied: boolean, reason: string | null) {
      if (wasApplied) {
        count(appliedTallies, source, () => applied.labels({ source }));
      } else {
        const why = reason ?? "unknown";
        count(ignoredTallies, `${source} ${why}`, () => ignored.labels({ source, reason: why }));
      }
    },
    requestFinished(route: string, method: string, status: number) {
      count(requestTallies, `${route} ${method} ${status}`, () =>
        requests.labels({ route, method, status: String(status) }),
      );
    },
    pollFinished(provider: string, outcome: string) {
      polls.labels({ provider, outcome }).inc();
    },
    effectAttempted(outcome: string, settleToDeliveredSeconds?: number, destination?: string) {
      count(attemptTallies, outcome, () => effectAttempts.labels({ outcome }));
      if (destination !== undefined)
        count(destinationTallies, `${destination} ${outcome}`, () =>
          destinationAttempts.labels({ destination, outcome }),
        );
      if (settleToDeliveredSeconds !== undefined) settleToDelivered.observe(settleToDeliveredSeconds);
    },
    jobSettled(job) {
      if (job.maxUpdateTime === null || job.settledAt === null) return;
      const seconds = Math.max(0, job.settledAt - job.maxUpdateTime) / 1000;
      detectionDelay.labels({ provider: job.provider, source: job.settledBy ?? "unknown" }).observe(seconds);
    },
    effectDelivered(effect, job, at) {
      if (job.maxUpdateTime === null) return;
      const seconds = Math.max(0, at - job.maxUpdateTime) / 1000;
      completionToEffect.labels({ provider: effect.provider, effect: effect.name }).observe(seconds);
    },
    rowsPruned(table: string, rows: number) {
      pruned.labels({ table }).inc(rows);
    },
    jobsDiscovered(provider: string, lagSeconds: readonly number[]) {
      if (lagSeconds.length === 0) return;
      discovered.labels({ provider }).inc(lagSeconds.length);
      const lag = discoveryLag.labels({ provider });
      for (const seconds of lagSeconds) lag.observe(seconds);
    },
    async render() {
      flushTallies();
      await refreshGauges();
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}
