import { createServer } from "node:net";
import type { SpanExporter } from "@opentelemetry/sdk-trace";
import { pino } from "pino";
import { createApp } from "../../app/create-app.js";
import { type FinalityConfig, headersTimeoutOf } from "../../config/config-schema.js";
import type { Environment } from "../../config/env-overrides.js";
import { type ConfigFlags, loadConfig } from "../../config/load-config.js";
import { usesBuiltInProvider } from "../../config/parse-config.js";
import { POLL_ONLY_TYPES, webhookConfigOf } from "../../config/provider-config-schema.js";
import { FinalityError } from "../../core/errors.js";
import { createProviderActivity } from "../../dashboard/provider-activity.js";
import type { Finality } from "../../engine/finality.js";
import { nodeApiReferenceAssets } from "../../http/node-api-reference-assets.js";
import { type NodeServer, startNodeServer } from "../../http/node-server.js";
import { createNodeWebhookHandler } from "../../http/node-webhook-handler.js";
import { createPromMetrics } from "../../http/prom-metrics.js";
import type { ServiceMetrics } from "../../http/service-metrics.js";
import { createWebhookIntake } from "../../http/webhook-intake.js";
import { createNodeProviders } from "../../providers/node-providers.js";
import { createRunService, type RunService } from "../../runs/run-service.js";
import { runServiceOptionsFrom } from "../../runs/run-service-config.js";
import type { PostgresStore } from "../../store/postgres/postgres-store.js";
import { sweepOptionsFromConfig } from "../discovery-from-config.js";
import { type BackgroundLoop, createBackgroundLoops } from "./background-loop.js";
import { createBrokerTargets } from "./broker-targets.js";
import { assertSafeBinding, finalityFromConfig } from "./finality-from-config.js";
import { jsonLinesLogger } from "./json-lines-logger.js";
import { startTelemetry } from "./telemetry.js";
import { type LineDestination, turnBatchedLines } from "./turn-batched-lines.js";

interface ServeOptions {
  configFile?: string | undefined;
  flags: ConfigFlags;
  env: Environment;
  /**
   * Readable log lines for a person: used for `log.format` "pretty", and for "auto" when
   * `interactive` (stdout is a terminal). The CLI gives its own; without it the lines are JSON.
   */
  prettyLog?: PrettyLog | undefined;
  /** Spans go here instead of `telemetry.otlpUrl`, and tracing is on (tests: an in-memory exporter). */
  spanExporter?: SpanExporter | undefined;
}

export interface PrettyLog {
  interactive: boolean;
  stream(): { write(line: string): void };
}

export interface RunningService {
  readonly url: string;
  readonly config: FinalityConfig;
  /** Graceful: stop accepting, answer in-flight requests, stop the loops, close the store. */
  stop(): Promise<void>;
}

/** `finality serve`: config → ledger → HTTP server → background loops. */
export async function serve(options: ServeOptions): Promise<RunningService> {
  const config = loadConfig({ file: options.configFile, env: options.env, flags: options.flags });
  assertSafeBinding(config);
  const destination = logDestination(config.log.format, options.prettyLog);
  const logger = pino({ level: config.log.level }, destination);
  // Before the store: a port in use must not leave a new empty database (or migrated schema) behind.
  await assertPortFree(config.server.host, config.server.port);
  // The request lines (one per webhook) skip pino's generic serializer; the same lines come out.
  const requestLogger = jsonLinesLogger(logger);
  const flushLogs = setInterval(() => logger.flush(), 1000);
  flushLogs.unref();
  const telemetry = await startTelemetry(
    config.telemetry,
    options.spanExporter ? { exporter: options.spanExporter } : {},
  );
  const finality = await finalityFromConfig(config).catch(async (error) => {
    await telemetry?.stop();
    throw error;
  });
  const runs = createRunService({ finality, ...runServiceOptionsFrom(config.workers) });
  let server: NodeServer;
  let metrics: ServiceMetrics;
  // Each adapter built once: the intake takes its receiver, the reconciler its poller.
  const providers = createNodeProviders(config.providers, () => finality.clock.now());
  // Broker effects' targets: no connection until the first delivery, but reported from the start.
  // A process that delivers nothing (effectDelivery.enabled false) keeps no broker connection.
  const delivered = config.effectDelivery.enabled ? finality.effects : [];
  const brokers = await createBrokerTargets(delivered, { now: () => finality.clock.now() });
  const activity = createProviderActivity(Object.keys(config.providers), () => finality.clock.now());
  // Ends the settlement long polls and streams when the server stops (see stop()).
  const shutdown = new AbortController();
  try {
    // Before listening: discovery on an instance without a list API is a configuration error.
    sweepOptionsFromConfig(config, providers);
    metrics = activity.observe(
      createPromMetrics({
        stats: () => finality.store.stats(finality.clock.now()),
        housekeeping: () => finality.store.housekeepingStats(),
        destinations: brokers.status,
        oldestOpenByProvider: () => finality.store.oldestOpenByProvider(Object.keys(config.providers)),
        orphanedIntents: () => finality.store.countOrphanedIntents(),
        ...("poolStats" in finality.store ? postgresMetrics(finality.store as PostgresStore) : {}),
      }),
    );
    const intake = createWebhookIntake({ finality, receivers: providers.receivers, metrics });
    const apiReferenceAssets = nodeApiReferenceAssets();
    const app = createApp({
      finality,
      config,
      metrics,
      logger: requestLogger,
      intake,
      runs,
      activity,
      apiReferenceAssets,
      destinations: brokers.status,
      shutdown: shutdown.signal,
    });
    const { bodyLimitBytes, bodyBytesInFlight } = config.server;
    const fastPath = createNodeWebhookHandler({
      intake,
      bodyLimitBytes,
      bodyBytesInFlight,
      trustTraceparent: config.telemetry.trustIncomingTraceparent,
      logger: requestLogger,
      metrics,
    });
    server = await startNodeServer(app, {
      host: config.server.host,
      port: config.server.port,
      fastPath,
      keepAliveTimeoutMs: config.server.keepAliveTimeoutMs,
      headersTimeoutMs: headersTimeoutOf(config.server),
    });
  } catch (error) {
    await finality.close();
    await telemetry?.stop();
    throw error;
  }
  const loops = createBackgroundLoops({ finality, config, logger, providers, runs, metrics, brokers });
  for (const loop of loops) loop.start();
  warnAboutUnsignedProviders(config, logger);
  logger.info({ url: server.url, providers: Object.keys(config.providers) }, "listening");

  let stopping: Promise<void> | null = null;
  return {
    url: server.url,
    config,
    stop() {
      // Settlement long polls answer and streams end at once, as the runs' claims do.
      shutdown.abort();
      stopping ??= shutDown(server, loops, finality, runs, logger)
        .then(() => telemetry?.stop())
        .finally(() => {
          clearInterval(flushLogs);
          destination.detach?.();
        });
      return stopping;
    },
  };
}

/**
 * JSON lines unless a person is watching: on a terminal (and with `log.format` "auto"), readable
 * lines. JSON lines go out buffered and asynchronously (4 KiB, flushed every second and on stop):
 * a log line never waits on a slow pipe, and a busy server makes one write per ~20 lines. A
 * turn's lines reach the buffer together (turn-batched-lines.ts).
 */
function logDestination(
  format: FinalityConfig["log"]["format"],
  prettyLog: PrettyLog | undefined,
): { write(line: string): unknown; detach?: () => void } {
  const pretty = format === "pretty" || (format === "auto" && prettyLog?.interactive === true);
  return pretty && prettyLog ? prettyLog.stream() : turnBatchedLines(bufferDestination(), { bytes: true });
}

/** Standard output through SonicBoom in its buffer mode (its types declare `write(string)` only). */
function bufferDestination(): LineDestination<Uint8Array> {
  const destination = pino.destination({ dest: 1, sync: false, minLength: 4096, contentMode: "buffer" });
  return destination as unknown as LineDestination<Uint8Array>;
}

/**
 * Binds the address for a moment and lets it go. Another process may take it in between; then
 * the real listen fails after the store is open, as before: this check is for the usual case of
 * a second `serve` started by mistake.
 */
async function assertPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once("error", (error: NodeJS.ErrnoException) => {
      const why =
        error.code === "EADDRINUSE"
          ? "is in use (another `finality serve`?)"
          : `cannot be bound (${error.code ?? error.message})`;
      reject(
        new FinalityError(
          "invalid-config",
          `config error: server.port: ${host}:${port} ${why}; nothing was opened or created. Choose another with --port or FINALITY_PORT`,
          { details: { field: "server.port" } },
        ),
      );
    });
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}

async function shutDown(
  server: NodeServer,
  loops: BackgroundLoop[],
  finality: Finality,
  runs: RunService,
  logger: pino.Logger,
): Promise<void> {
  logger.info({}, "shutting down");
  // Answers long-polling claims (204) at once, so closing the server does not wait for them.
  runs.close();
  await server.close();
  await Promise.all(loops.map((loop) => loop.stop()));
  await finality.close();
  logger.info({}, "stopped");
  await new Promise<void>((resolve) => logger.flush(() => resolve()));
}

/** One warning per provider instance whose webhooks are refused for want of a secret (exported for its test). */
export function warnAboutUnsignedProviders(config: FinalityConfig, logger: Pick<pino.Logger, "warn">): void {
  for (const [name, provider] of Object.entries(config.providers)) {
    if (webhookConfigOf(provider) === undefined && !POLL_ONLY_TYPES.has(provider.type)) {
      // FINALITY_WEBHOOK_SECRET only signs the provider the service adds when none is configured.
      const fix = usesBuiltInProvider(config)
        ? "set FINALITY_WEBHOOK_SECRET, or configure providers"
        : `add providers.${name}.webhook to the configuration`;
      logger.warn({ provider: name }, `provider has no webhook secret: its webhooks are refused (${fix})`);
    }
  }
}

/** The PostgreSQL store's own counters, copied into /metrics at each scrape. */
function postgresMetrics(store: PostgresStore) {
  return { pool: store.poolStats, groupCommit: store.groupCommitStats };
}
