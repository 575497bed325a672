import type { FinalityConfig } from "../../config/config-schema.js";
import type { Finality } from "../../engine/finality.js";
import { engineOf } from "../../engine/finality-engine.js";
import { createOrphanScanLoop } from "../../engine/intent-orphan-loop.js";
import { createNodeHttpTransport } from "../../engine/node-http-transport.js";
import { createRetentionLoop } from "../../engine/retention.js";
import type { Logger } from "../../http/request-log.js";
import type { ServiceMetrics } from "../../http/service-metrics.js";
import type { ProviderRegistry } from "../../providers/provider-registry.js";
import { createLeaseSweeper } from "../../runs/lease-sweeper-loop.js";
import type { RunService } from "../../runs/run-service.js";
import { signStandardWebhook } from "../../webhooks/schemes/standard-webhooks/node.js";
import { discoveryLoopsFromConfig } from "../discovery-from-config.js";
import { dispatcherFromConfig, reconcilerFromConfig, retentionWindowsFromConfig } from "../from-config.js";
import { type BrokerTargets, cloudEventsSource } from "./broker-targets.js";

/** A loop that runs beside the HTTP server: the outbox dispatcher, the reconciler, ... */
export interface BackgroundLoop {
  readonly name: string;
  start(): void;
  /** Resolves once the loop's work in flight has finished; nothing runs after it. */
  stop(): Promise<void>;
}

/**
 * The loops `finality serve` runs: started after the server listens, stopped after it has
 * answered its last request and before the store closes. A new loop is added here.
 */
export function createBackgroundLoops(context: {
  finality: Finality;
  config: FinalityConfig;
  logger: Logger;
  /** The provider adapters the webhook intake uses too: the reconciler polls with theirs. */
  providers: ProviderRegistry;
  runs?: RunService;
  metrics?: ServiceMetrics;
  /** Where broker effects go (built by serve, so /readyz can report them from the start). */
  brokers?: BrokerTargets;
}): BackgroundLoop[] {
  const { finality, config, logger } = context;
  const loops: BackgroundLoop[] = [];
  const delivery = config.effectDelivery;

  if (config.effects.length > 0 && delivery.enabled) {
    const dispatcher = dispatcherFromConfig(finality, config, {
      logger,
      ...(context.metrics ? { metrics: context.metrics } : {}),
      transport: createNodeHttpTransport({ maxSockets: delivery.concurrency }),
      sign: signStandardWebhook,
      source: cloudEventsSource(),
      ...(context.brokers ? { targets: context.brokers.targets } : {}),
    });
    let unsubscribe: (() => void) | null = null;
    loops.push({
      name: "dispatcher",
      start() {
        // Woken by each commit that enqueued effects, so delivery does not wait for the next poll.
        unsubscribe = finality.onEffectsEnqueued(() => dispatcher.poke());
        dispatcher.start();
      },
      async stop() {
        unsubscribe?.();
        await dispatcher.stop();
        await context.brokers?.close();
      },
    });
  }

  const reconciler = reconcilerFromConfig(finality, config, {
    logger,
    providers: context.providers,
    ...(context.metrics ? { metrics: context.metrics } : {}),
  });
  loops.push({ name: "reconciler", start: () => reconciler.start(), stop: () => reconciler.stop() });

  const retention = createRetentionLoop(engineOf(finality).store, retentionWindowsFromConfig(config), {
    intervalMs: config.retention.intervalMinutes * 60_000,
    now: () => engineOf(finality).clock.now(),
    onPass: (counts) => {
      for (const [table, rows] of Object.entries(counts))
        if (rows > 0) context.metrics?.rowsPruned(table, rows);
      if (Object.values(counts).some((rows) => rows > 0)) logger.info({ pruned: counts }, "retention pass");
    },
    onError: (error) => logger.warn({ err: error }, "retention pass failed"),
  });
  loops.push({ name: "retention", start: () => retention.start(), stop: () => retention.stop() });

  const orphans = createOrphanScanLoop(finality, {
    onFlagged: (intents) =>
      logger.warn(
        { intents: intents.map((i) => ({ key: i.key, provider: i.provider })) },
        "intents orphaned: no remote id attached before their timeout",
      ),
    onError: (error) => logger.warn({ err: error }, "orphan scan failed"),
  });
  loops.push(orphans);
  loops.push(...discoveryLoopsFromConfig(finality, config, { ...context, logger }));

  if (context.runs) {
    const sweeper = createLeaseSweeper(context.runs, {
      intervalMs: config.workers.sweepIntervalSeconds * 1000,
      onSweep: (counts) => logger.info({ counts }, "leases expired"),
      onError: (error) => logger.warn({ err: error }, "lease sweep failed"),
    });
    loops.push({ name: "lease-sweeper", start: () => sweeper.start(), stop: () => sweeper.stop() });
  }
  return loops;
}
