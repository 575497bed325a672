import * as z from "zod";
import { providerNameSchema } from "../core/validation.js";
import { effectSchema } from "./effect-config-schema.js";
import {
  httpUrl,
  PROVIDER_TYPES,
  type ProviderType,
  providerSchema,
  reconcileFields,
  webhookConfigOf,
} from "./provider-config-schema.js";
import { tombstoneTooShort } from "./tombstone-cover.js";

export { PROVIDER_TYPES, type ProviderType };

/**
 * The service's configuration file. These key names are a contract with users and outside
 * tests: add keys, never rename them. Every field is documented in docs/configuration.md (a test checks it).
 * Every object is strict: an unknown key is refused, and parse-config.ts offers the closest key
 * the schema declares ("did you mean"), so a new key only needs to be declared here.
 */

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

const positiveSeconds = z.number().finite().positive();
/**
 * POSTGRES_TIMEOUT_DEFAULTS.statementTimeoutMs / 1000 (postgres-client.ts), not imported from
 * there: loading the configuration must not load node-postgres (test/host/lazy-modules.test.ts).
 */
const DEFAULT_STATEMENT_TIMEOUT_SECONDS = 15;

const serverSchema = z.strictObject({
  host: z.string().min(1).default("127.0.0.1"),
  port: z.number().int().min(0).max(65535).default(8787),
  bodyLimitBytes: z.number().int().positive().default(1_048_576),
  /**
   * Request bodies being read at once, all connections together (64 MiB): a body that would pass
   * it is refused with 503 at once, so slow senders cannot hold memory without bound.
   */
  bodyBytesInFlight: z.number().int().positive().default(67_108_864),
  /**
   * How long an idle keep-alive connection stays open (65 s): above the idle timeouts of common
   * proxies and load balancers (60 s), so that the proxy, not the server, closes an idle connection.
   */
  keepAliveTimeoutMs: z.number().int().min(1000).max(3_600_000).default(65_000),
  /** Time to receive a request's headers (default keepAliveTimeoutMs + 1000; must be above it). */
  headersTimeoutMs: z.number().int().min(1000).max(3_600_000).optional(),
  /** Bearer token for /v1; without one the server only binds to loopback. */
  apiToken: z.string().min(16, "must be at least 16 characters").optional(),
});

const sqliteStoreSchema = z.strictObject({
  sqlite: z.string().min(1),
  synchronous: z.enum(["NORMAL", "FULL"], { error: "must be FULL or NORMAL" }).default("FULL"),
  /** SQLite's page cache per connection, in MiB (4; the store opens two connections). */
  cacheMiB: z.number().int().min(1).max(65_536).optional(),
});
const postgresStoreSchema = z.strictObject({
  postgres: z.string().regex(/^postgres(ql)?:\/\//, "must be a postgres:// URL"),
  /** Schema for Finality's tables (created if missing); default: the server's search_path. */
  schema: z
    .string()
    .regex(/^[a-z_][a-z0-9_]*$/, "must be a lowercase SQL identifier")
    .optional(),
  /** Connections in each process's pool (10). */
  poolSize: z.number().int().min(1).max(1000).optional(),
  /** Bound on opening a connection and on waiting for a pooled one (5): then a 503. */
  connectTimeoutSeconds: positiveSeconds.optional(),
  /** statement_timeout (15): a statement running longer is cancelled and answered 503. */
  statementTimeoutSeconds: positiveSeconds.optional(),
  /** lock_timeout (5): waiting longer for a row lock (a stalled peer holds it) is answered 503. */
  lockTimeoutSeconds: positiveSeconds.optional(),
  /**
   * idle_in_transaction_session_timeout (10): PostgreSQL ends a session whose transaction sat
   * idle this long (its replica frozen or cut off) and so releases the locks it held.
   */
  idleInTransactionTimeoutSeconds: positiveSeconds.optional(),
  /**
   * How long a replica waits for the answer to one statement (statementTimeoutSeconds + 5): the
   * bound when the server or the network goes silent; then 503 and the connection is replaced.
   */
  queryTimeoutSeconds: positiveSeconds.optional(),
  /** Concurrent ingests committed in one transaction (32); 1 turns group commit off. */
  groupCommitMaxBatch: z.number().int().min(1).max(1000).optional(),
  /** Milliseconds a group is collected before it starts (0: until the event loop is idle). */
  groupCommitMaxWaitMs: z.number().min(0).max(1000).optional(),
});

/** The keys of a SQLite store other than its path: what FINALITY_DB keeps from the file. */
export const SQLITE_STORE_SETTINGS = ["synchronous", "cacheMiB"] as const;

/** The keys of a PostgreSQL store other than its URL: what DATABASE_URL keeps from the file. */
export const POSTGRES_STORE_SETTINGS = [
  "schema",
  "poolSize",
  "connectTimeoutSeconds",
  "statementTimeoutSeconds",
  "lockTimeoutSeconds",
  "idleInTransactionTimeoutSeconds",
  "queryTimeoutSeconds",
  "groupCommitMaxBatch",
  "groupCommitMaxWaitMs",
] as const;
const storeSchema = z.union([sqliteStoreSchema, postgresStoreSchema], {
  error: 'expected {"sqlite": path} or {"postgres": url}',
});

const DEFAULT_RECONCILE = {
  graceSeconds: 90,
  minIntervalSeconds: 30,
  maxIntervalSeconds: 900,
  stuckAfterSeconds: 21_600,
  concurrency: 10,
} as const;

const reconcileSchema = z
  .strictObject({
    graceSeconds: reconcileFields.graceSeconds.default(DEFAULT_RECONCILE.graceSeconds),
    minIntervalSeconds: reconcileFields.minIntervalSeconds.default(DEFAULT_RECONCILE.minIntervalSeconds),
    maxIntervalSeconds: reconcileFields.maxIntervalSeconds.default(DEFAULT_RECONCILE.maxIntervalSeconds),
    stuckAfterSeconds: reconcileFields.stuckAfterSeconds.default(DEFAULT_RECONCILE.stuckAfterSeconds),
    concurrency: reconcileFields.concurrency.default(DEFAULT_RECONCILE.concurrency),
    ratePerSecond: reconcileFields.ratePerSecond.optional(),
    burst: reconcileFields.burst.optional(),
  })
  .refine((r) => r.minIntervalSeconds <= r.maxIntervalSeconds, {
    message: "minIntervalSeconds must not exceed maxIntervalSeconds",
    path: ["minIntervalSeconds"],
  });

const effectDeliverySchema = z.strictObject({
  /** False: this process writes effects but never delivers them (another replica does). */
  enabled: z.boolean().default(true),
  concurrency: z.number().int().positive().max(1000).default(50),
  timeoutSeconds: positiveSeconds.default(15),
  /**
   * How long a claimed delivery is held (default timeoutSeconds × 4); renewed while the delivery is
   * in flight, and a crashed dispatcher's rows return after it. Must be longer than timeoutSeconds.
   */
  leaseSeconds: positiveSeconds.optional(),
  pollIntervalSeconds: positiveSeconds.default(1),
  /** Delay before retry 1, 2, ...; the last one repeats. */
  retrySeconds: z.array(positiveSeconds).min(1).default([5, 30, 120, 600, 1800, 3600]),
  /** Give up (status dead) once an effect is this old: 3 days by default. */
  maxAgeSeconds: positiveSeconds.default(259_200),
  maxAttempts: z.number().int().positive().optional(),
});

const days = z.number().finite().positive();
const retentionSchema = z.strictObject({
  deliveriesDays: days.default(7),
  eventsDays: days.default(14),
  settledJobsDays: days.default(14),
  deliveredEffectsDays: days.default(14),
  settledRunsDays: days.default(14),
  /**
   * A pruned job's tombstone, counted from when it settled: until then a late or replayed
   * webhook for it is `already-settled-pruned` and fires nothing. Must be at least
   * settledJobsDays + the longest window in which a pruned job can come back (tombstone-cover.ts).
   */
  tombstonesDays: days.default(400),
  /** The early-completion inbox: how long an observation for an unregistered job waits for it. */
  parkedDays: days.default(7),
  /**
   * The settlement feed (`/v1/settlements`), counted from when the job settled: a consumer whose
   * cursor is older misses the settlements pruned meanwhile.
   */
  settlementsDays: days.default(14),
  /** Time between retention passes inside `finality serve`. */
  intervalMinutes: days.default(10),
});

/** Cloudflare Workers only (src/cloudflare): how much one scheduled run or alarm may do. */
const cloudflareSchema = z.strictObject({
  /** Status polls per cron run; what is left stays due (oldest first) for the next run. */
  pollsPerRun: z.number().int().min(1).max(10_000).default(40),
  /** Effect deliveries per cron run or alarm; more due means another alarm at once. */
  effectsPerRun: z.number().int().min(1).max(10_000).default(40),
  /** Expired rows pruned per table per cron run. */
  pruneBatch: z.number().int().min(1).max(100_000).default(1000),
  /** Ledger Durable Objects jobs are spread over by a hash of (provider, id); 1 is the single `ledger` object. */
  shards: z.number().int().min(1).max(256).default(1),
  /** The shard count before the last change, kept while its objects drain (docs/cloudflare-workers.md). */
  previousShards: z.number().int().min(1).max(256).optional(),
});

const workerPoolSchema = z.strictObject({
  token: z.string().min(16, "must be at least 16 characters"),
  kinds: z.array(z.string().min(1).max(128)).min(1).optional(),
});

const workersSchema = z.strictObject({
  pools: z.record(providerNameSchema, workerPoolSchema).default({}),
  leaseSeconds: z.number().min(1).max(3600).default(30),
  maxAttempts: z.number().int().min(1).max(100).default(3),
  retryBaseSeconds: positiveSeconds.default(1),
  retryMaxSeconds: positiveSeconds.default(300),
  sweepIntervalSeconds: positiveSeconds.default(1),
  /**
   * Lease expiries before the worker's first heartbeat (the attempt given back, not spent) a run
   * survives; the next one ends it `lost` with REMOTE_RUN_LEASE_EXPIRED_BEFORE_START.
   */
  maxUnstartedReleases: z.number().int().min(0).max(1000).default(5),
});

/** What every observation is held to on the one ingest path, whatever its source. */
const ingestSchema = z.strictObject({
  /**
   * How far ahead of its receipt an observation's `updateTime` may be and still order its job;
   * a time further ahead is cut to the receipt time (and the event says so), so that one skewed
   * clock cannot make every later same-rank update `stale`. 0: never ahead of the receipt.
   */
  maxClockSkewSeconds: z.number().finite().min(0).max(86_400).default(300),
});

/**
 * OpenTelemetry traces (docs/telemetry.md). Off unless `otlpUrl` is set (or
 * OTEL_EXPORTER_OTLP_ENDPOINT): off costs nothing on any path.
 */
const telemetrySchema = z.strictObject({
  /** Where spans are posted, OTLP/HTTP JSON: the collector's full traces URL (…/v1/traces). */
  otlpUrl: httpUrl.optional(),
  serviceName: z.string().min(1).max(256).default("finality"),
  /** The share of new traces kept (a trace continued from a caller follows the caller's choice). */
  sampleRatio: z.number().min(0).max(1).default(1),
  /**
   * False (default): a caller's `traceparent` on a webhook or API request is ignored. True: it is
   * followed (as the parent, and for the sampling decision) once the request is verified.
   */
  trustIncomingTraceparent: z.boolean().default(false),
});

export const configSchema = z
  .strictObject({
    server: serverSchema.default(serverSchema.parse({})),
    store: storeSchema.default({ sqlite: "./finality.db", synchronous: "FULL" }),
    providers: z.record(providerNameSchema, providerSchema).default({}),
    reconcile: reconcileSchema.default(reconcileSchema.parse({})),
    effects: z.array(effectSchema).default([]),
    ingest: ingestSchema.default(ingestSchema.parse({})),
    /** Seconds an intent may stay without a remote id before it is flagged orphaned (15 min). */
    intentTimeoutSeconds: positiveSeconds.default(900),
    effectDelivery: effectDeliverySchema.default(effectDeliverySchema.parse({})),
    retention: retentionSchema.default(retentionSchema.parse({})),
    workers: workersSchema.default(workersSchema.parse({})),
    cloudflare: cloudflareSchema.default(cloudflareSchema.parse({})),
    telemetry: telemetrySchema.default(telemetrySchema.parse({})),
    log: z
      .strictObject({
        level: z.enum(LOG_LEVELS).default("info"),
        /** auto: readable lines when stdout is a terminal, JSON lines otherwise. */
        format: z.enum(["auto", "json", "pretty"]).default("auto"),
      })
      .default({ level: "info", format: "auto" }),
    /** JSON Schema reference for editors; ignored. */
    $schema: z.string().optional(),
  })
  .superRefine((config, ctx) => {
    if (Object.hasOwn(config.providers, "runs"))
      ctx.addIssue({
        code: "custom",
        path: ["providers", "runs"],
        message: 'is reserved: jobs of provider "runs" mirror runs on your own workers',
      });
    // A delivery id forgotten while its sender may still redeliver would be applied twice.
    for (const [name, provider] of Object.entries(config.providers)) {
      const toleranceSeconds = (webhookConfigOf(provider) as { toleranceSeconds?: number } | undefined)
        ?.toleranceSeconds;
      if (toleranceSeconds !== undefined && config.retention.deliveriesDays * 86_400 < toleranceSeconds) {
        ctx.addIssue({
          code: "custom",
          path: ["retention", "deliveriesDays"],
          message: `must cover provider "${name}"'s webhook tolerance window (${toleranceSeconds} s): delivery ids must outlive every redelivery`,
        });
      }
    }
    // A sweep lists only the jobs created in the last lookbackHours: with sweeps further apart
    // than that, a job created just after one sweep is already too old for the next, and a job
    // whose webhooks were all lost is never found.
    for (const [name, provider] of Object.entries(config.providers)) {
      const discover = provider.discover;
      if (discover?.enabled !== true || discover.lookbackHours >= discover.intervalSeconds / 3_600) continue;
      ctx.addIssue({
        code: "custom",
        path: ["providers", name, "discover", "lookbackHours"],
        message: `must cover providers.${name}.discover.intervalSeconds (${discover.intervalSeconds} s = ${+(discover.intervalSeconds / 3_600).toFixed(4)} h): a sweep lists only jobs created in the last lookbackHours, so a job created between two sweeps would never be listed`,
      });
    }
    // A tombstone pruned while its job can still come back (a redelivery, a discovery sweep)
    // leaves that job's id unguarded: it would be adopted again and fire its effects twice.
    const tooShort = tombstoneTooShort(config);
    if (tooShort !== null)
      ctx.addIssue({ code: "custom", path: ["retention", "tombstonesDays"], message: tooShort });
    if ("postgres" in config.store && config.store.queryTimeoutSeconds !== undefined) {
      const statement = config.store.statementTimeoutSeconds ?? DEFAULT_STATEMENT_TIMEOUT_SECONDS;
      if (config.store.queryTimeoutSeconds <= statement)
        ctx.addIssue({
          code: "custom",
          path: ["store", "queryTimeoutSeconds"],
          message: `must be longer than store.statementTimeoutSeconds (${statement} s): a statement the client gave up on would go on running on the server, holding its locks, until statement_timeout`,
        });
    }
    checkServerLimits(config.server, ctx);
    const { leaseSeconds, timeoutSeconds } = config.effectDelivery;
    if (leaseSeconds !== undefined && leaseSeconds <= timeoutSeconds)
      ctx.addIssue({
        code: "custom",
        path: ["effectDelivery", "leaseSeconds"],
        message: `must be longer than effectDelivery.timeoutSeconds (${timeoutSeconds} s): a delivery still in flight when its lease runs out would be sent again, in parallel`,
      });
    const seen = new Set<string>();
    config.effects.forEach((effect, index) => {
      if (seen.has(effect.name))
        ctx.addIssue({ code: "custom", path: ["effects", index, "name"], message: "is defined twice" });
      seen.add(effect.name);
      for (const provider of effect.providers ?? []) {
        // `runs` is the reserved provider of runs on your own workers.
        if (
          provider !== "runs" &&
          !Object.hasOwn(config.providers, provider) &&
          Object.keys(config.providers).length > 0
        )
          ctx.addIssue({
            code: "custom",
            path: ["effects", index, "providers"],
            message: `unknown provider "${provider}"`,
          });
      }
    });
  });

/** Combinations of `server` keys the server cannot keep its promise under, refused naming the keys. */
function checkServerLimits(server: z.output<typeof serverSchema>, ctx: z.RefinementCtx): void {
  // Below the body limit, a body the limit allows could never be read.
  if (server.bodyBytesInFlight < server.bodyLimitBytes)
    ctx.addIssue({
      code: "custom",
      path: ["server", "bodyBytesInFlight"],
      message: `must be at least server.bodyLimitBytes (${server.bodyLimitBytes}): a body of the allowed size could never be read`,
    });
  // A connection's next request must not be cut for slow headers while it may still be idle.
  if (server.headersTimeoutMs !== undefined && server.headersTimeoutMs <= server.keepAliveTimeoutMs)
    ctx.addIssue({
      code: "custom",
      path: ["server", "headersTimeoutMs"],
      message: `must be above server.keepAliveTimeoutMs (${server.keepAliveTimeoutMs})`,
    });
}

/** The headers timeout the server uses: the configured one, or 1 s above the keep-alive timeout. */
export function headersTimeoutOf(server: FinalityConfig["server"]): number {
  return server.headersTimeoutMs ?? server.keepAliveTimeoutMs + 1000;
}

export type FinalityConfig = z.output<typeof configSchema>;
export type ProviderConfig = FinalityConfig["providers"][string];
/** The configuration of one adapter type, e.g. `ProviderConfigOf<"openai">`. */
export type ProviderConfigOf<T extends ProviderType> = Extract<ProviderConfig, { type: T }>;
export type EffectConfig = FinalityConfig["effects"][number];
export type StoreConfig = FinalityConfig["store"];
export type TelemetryConfig = FinalityConfig["telemetry"];
