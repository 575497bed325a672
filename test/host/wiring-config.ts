import { SECRET } from "../http/helpers/webhooks.js";

/**
 * A configuration that sets every key the Node host uses to a value unlike its default, so that a
 * key dropped on the way shows as the default arriving instead.
 */
export function CONFIG(at: { sqlite: string; port: number }) {
  return {
    server: {
      host: "127.0.0.1",
      port: at.port,
      bodyLimitBytes: 4096,
      bodyBytesInFlight: 40_960,
      keepAliveTimeoutMs: 71_000,
      headersTimeoutMs: 73_000,
      apiToken: "wiring-api-token-0123456789",
    },
    store: { sqlite: at.sqlite, synchronous: "NORMAL" as const, cacheMiB: 3 },
    providers: {
      acme: {
        type: "generic" as const,
        webhook: { secrets: [SECRET] },
        unknownJobs: "registered-only" as const,
        intentTimeoutSeconds: 77,
        reconcile: {
          graceSeconds: 7,
          minIntervalSeconds: 11,
          maxIntervalSeconds: 222,
          stuckAfterSeconds: 3333,
          concurrency: 3,
          ratePerSecond: 2,
          burst: 4,
        },
      },
      // No webhook secret: warned about at start (the log-level check reads that line).
      quiet: { type: "generic" as const },
    },
    reconcile: {
      graceSeconds: 45,
      minIntervalSeconds: 12,
      maxIntervalSeconds: 345,
      stuckAfterSeconds: 4567,
      concurrency: 6,
      ratePerSecond: 3,
      burst: 5,
    },
    effects: [
      {
        name: "notify",
        url: "http://127.0.0.1:9/effects",
        secret: SECRET,
        maxMessageBytes: 300_000,
        on: ["succeeded", "stuck"],
        providers: ["acme"],
        kinds: ["render"],
      },
      // Broker effects: nothing settles in the wiring test, so no connection is ever opened.
      {
        name: "bus",
        nats: {
          servers: ["nats://127.0.0.1:9"],
          subject: "finality.wiring",
          stream: "FINALITY_WIRING",
          duplicateWindowSeconds: 600,
        },
        format: "cloudevents" as const,
        cloudevents: { mode: "binary" as const, source: "finality://wiring" },
      },
      {
        name: "q",
        amqp: {
          url: "amqp://guest:guest@127.0.0.1:9",
          exchange: "x",
          routingKey: "finality",
          queue: "finality-wiring",
        },
      },
      {
        name: "s",
        redis: { url: "redis://127.0.0.1:9", stream: "finality-wiring", dedupeSeconds: 999, maxLength: 50 },
      },
    ],
    intentTimeoutSeconds: 654,
    ingest: { maxClockSkewSeconds: 42 },
    effectDelivery: {
      enabled: true,
      concurrency: 7,
      timeoutSeconds: 4,
      leaseSeconds: 9,
      pollIntervalSeconds: 2.5,
      retrySeconds: [3, 33],
      maxAgeSeconds: 999,
      maxAttempts: 6,
    },
    retention: {
      deliveriesDays: 8,
      eventsDays: 15,
      settledJobsDays: 16,
      deliveredEffectsDays: 17,
      settledRunsDays: 18,
      tombstonesDays: 401,
      parkedDays: 9,
      settlementsDays: 19,
      intervalMinutes: 11,
    },
    workers: {
      pools: { render: { token: "wiring-pool-token-0123456789", kinds: ["render"] } },
      leaseSeconds: 31,
      maxAttempts: 4,
      retryBaseSeconds: 2,
      retryMaxSeconds: 301,
      sweepIntervalSeconds: 1.5,
      maxUnstartedReleases: 8,
    },
    log: { level: "warn" as const, format: "pretty" as const },
  };
}

/** The PostgreSQL store's own keys, each unlike its default. */
export const POSTGRES_STORE = {
  poolSize: 3,
  connectTimeoutSeconds: 4,
  statementTimeoutSeconds: 16,
  lockTimeoutSeconds: 6,
  idleInTransactionTimeoutSeconds: 17,
  queryTimeoutSeconds: 22,
};

/**
 * Keys whose wiring another test checks, by that test's file (which must name the key), or, for
 * the few with none yet, the reason.
 */
export const ELSEWHERE: Record<string, { test: string } | { unchecked: string }> = {
  // The Worker's cron and alarm budgets: read by src/cloudflare/ledger-object.ts, not the Node host.
  "cloudflare.pollsPerRun": { test: "test/cloudflare/worker-cron-effects.test.ts" },
  "cloudflare.effectsPerRun": { test: "test/cloudflare/worker-budgets.test.ts" },
  "cloudflare.pruneBatch": { test: "test/cloudflare/worker-budgets.test.ts" },
  // The shard layout: read by the Worker (src/cloudflare/shard-layout.ts), never by the Node host.
  "cloudflare.shards": { test: "test/cloudflare/worker-shards.test.ts" },
  "cloudflare.previousShards": { test: "test/cloudflare/worker-reshard.test.ts" },
  "store.groupCommitMaxBatch": { test: "test/store/postgres-group-commit.test.ts" },
  "store.groupCommitMaxWaitMs": { test: "test/store/postgres-group-commit.test.ts" },
  // Read by host/node/telemetry.ts: the spans' resource, the sampler, the exporter's URL.
  "telemetry.serviceName": { test: "test/telemetry/webhook-trace.test.ts" },
  "telemetry.sampleRatio": { test: "test/telemetry/webhook-trace.test.ts" },
  "telemetry.otlpUrl": { test: "test/telemetry/otlp-export.test.ts" },
  // Read by the webhook fast path and the API's tracing, both only while tracing is on.
  "telemetry.trustIncomingTraceparent": { test: "test/telemetry/traceparent-trust.test.ts" },
  $schema: { unchecked: "an editor's hint, ignored by design" },
  // Read by the host's discovery loops (host/discovery-from-config.ts) on a real `serve`.
  "providers.<name>.discover.enabled": { test: "test/chaos/intent-crash.test.ts" },
  "providers.<name>.discover.intervalSeconds": { test: "test/chaos/intent-crash.test.ts" },
  "providers.<name>.discover.lookbackHours": { test: "test/chaos/intent-crash.test.ts" },
  "providers.<name>.discover.pagesPerSweep": { test: "test/chaos/intent-crash.test.ts" },
};

/** The `discover` keys the host reads (the rest go to the adapter: url, headers, timeout to the generic one, kinds to Anthropic's). */
const HOST_READ_DISCOVER = [
  "providers.<name>.discover.enabled",
  "providers.<name>.discover.intervalSeconds",
  "providers.<name>.discover.lookbackHours",
  "providers.<name>.discover.pagesPerSweep",
];

/**
 * The keys to account for, from the schema's dotted paths (test/docs/schema-keys.ts): the leaves
 * only (an object is covered by its keys), and a provider instance's adapter options as one key,
 * `providers.<name>`: the host hands the instance's configuration to its adapter whole (checked
 * here), and each adapter's reading of its options is tested in test/providers.
 */
export function WIRING_KEYS(schemaKeys: string[]): string[] {
  const hostRead = (key: string) =>
    key === "providers.<name>.unknownJobs" ||
    key === "providers.<name>.intentTimeoutSeconds" ||
    HOST_READ_DISCOVER.includes(key) ||
    key.startsWith("providers.<name>.reconcile.");
  const keys = schemaKeys.map((key) =>
    key.startsWith("providers.<name>.") && !hostRead(key) ? "providers.<name>" : key,
  );
  const unique = [...new Set(keys)];
  return unique.filter(
    (key) =>
      key === "providers.<name>" ||
      !unique.some((other) => other.startsWith(`${key}.`) || other.startsWith(`${key}[]`)),
  );
}
