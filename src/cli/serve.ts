import { pino } from "pino";
import type { FinalityConfig } from "../config/config-schema.js";
import type { Environment } from "../config/env-overrides.js";
import { type ConfigFlags, loadConfig } from "../config/load-config.js";
import { createProviderActivity } from "../dashboard/provider-activity.js";
import type { Finality } from "../engine/finality.js";
import { createApp } from "../http/create-app.js";
import { type NodeServer, startNodeServer } from "../http/node-server.js";
import { createNodeWebhookHandler } from "../http/node-webhook-handler.js";
import { createPromMetrics } from "../http/prom-metrics.js";
import type { ServiceMetrics } from "../http/service-metrics.js";
import { createWebhookIntake } from "../http/webhook-intake.js";
import { createRunService, type RunService } from "../runs/run-service.js";
import { createWebhookReceivers } from "../webhooks/webhook-receivers.js";
import { type BackgroundLoop, createBackgroundLoops } from "./background-loop.js";
import { assertSafeBinding, finalityFromConfig } from "./finality-from-config.js";

export interface ServeOptions {
  configFile?: string | undefined;
  flags: ConfigFlags;
  env: Environment;
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
  // Buffered asynchronous writes (4 KiB, flushed every second and on stop): a log line never waits
  // on the terminal, and a busy server makes one write per ~20 lines rather than one each.
  const logger = pino(
    { level: config.log.level },
    pino.destination({ dest: 1, sync: false, minLength: 4096 }),
  );
  const flushLogs = setInterval(() => logger.flush(), 1000);
  flushLogs.unref();
  const finality = await finalityFromConfig(config);
  const runs = createRunService({
    finality,
    defaultLeaseSeconds: config.workers.leaseSeconds,
    defaultMaxAttempts: config.workers.maxAttempts,
    retry: {
      baseDelayMs: config.workers.retryBaseSeconds * 1000,
      maxDelayMs: config.workers.retryMaxSeconds * 1000,
    },
  });
  let server: NodeServer;
  let metrics: ServiceMetrics;
  const activity = createProviderActivity(Object.keys(config.providers), () => finality.clock.now());
  try {
    metrics = activity.observe(
      createPromMetrics({
        stats: () => finality.store.stats(finality.clock.now()),
        housekeeping: () => finality.store.housekeepingStats(),
      }),
    );
    const receivers = createWebhookReceivers(config.providers, () => finality.clock.now());
    const intake = createWebhookIntake({ finality, receivers, metrics });
    const app = createApp({ finality, config, metrics, logger, intake, runs, activity });
    const bodyLimitBytes = config.server.bodyLimitBytes;
    const fastPath = createNodeWebhookHandler({ intake, bodyLimitBytes, logger, metrics });
    server = await startNodeServer(app, { host: config.server.host, port: config.server.port, fastPath });
  } catch (error) {
    await finality.close();
    throw error;
  }
  const loops = createBackgroundLoops({ finality, config, logger, runs, metrics });
  for (const loop of loops) loop.start();
  warnAboutUnsignedProviders(config, logger);
  logger.info({ url: server.url, providers: Object.keys(config.providers) }, "listening");

  let stopping: Promise<void> | null = null;
  return {
    url: server.url,
    config,
    stop() {
      stopping ??= shutDown(server, loops, finality, runs, logger).finally(() => clearInterval(flushLogs));
      return stopping;
    },
  };
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

function warnAboutUnsignedProviders(config: FinalityConfig, logger: pino.Logger): void {
  for (const [name, provider] of Object.entries(config.providers)) {
    if (provider.webhook === undefined) {
      logger.warn(
        { provider: name },
        "provider has no webhook secret: its webhooks are refused (set FINALITY_WEBHOOK_SECRET for the built-in generic provider)",
      );
    }
  }
}
