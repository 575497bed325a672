import type { FinalityConfig } from "../config/config-schema.js";
import { createDispatcher } from "../engine/dispatcher.js";
import type { Finality } from "../engine/finality.js";
import { createHttpEffectDeliverer } from "../engine/http-effect-target.js";
import { createNodeHttpTransport } from "../engine/node-http-transport.js";
import { createReconciler, type ProviderReconcileOptions, type Reconciler } from "../engine/reconciler.js";
import { createRetentionLoop } from "../engine/retention.js";
import type { Logger } from "../http/request-log.js";
import type { ServiceMetrics } from "../http/service-metrics.js";
import { createProviderAdapter } from "../providers/provider-adapters.js";
import { type ProviderHealth, providerHealth } from "../providers/provider-health.js";
import { createLeaseSweeper } from "../runs/lease-sweeper.js";
import type { RunService } from "../runs/run-service.js";

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
  runs?: RunService;
  metrics?: ServiceMetrics;
}): BackgroundLoop[] {
  const { finality, config, logger } = context;
  const loops: BackgroundLoop[] = [];
  const delivery = config.effectDelivery;

  if (config.effects.length > 0 && delivery.enabled) {
    const dispatcher = createDispatcher(finality, {
      deliverUrl: createHttpEffectDeliverer({
        now: () => finality.clock.now(),
        transport: createNodeHttpTransport({ maxSockets: delivery.concurrency }),
      }),
      concurrency: delivery.concurrency,
      timeoutMs: delivery.timeoutSeconds * 1000,
      ...(delivery.leaseSeconds ? { leaseMs: delivery.leaseSeconds * 1000 } : {}),
      pollIntervalMs: delivery.pollIntervalSeconds * 1000,
      retry: {
        scheduleMs: delivery.retrySeconds.map((seconds) => seconds * 1000),
        maxAgeMs: delivery.maxAgeSeconds * 1000,
        maxAttempts: delivery.maxAttempts,
      },
      onAttempt: (attempt) => {
        const delivered = attempt.outcome === "delivered";
        context.metrics?.effectAttempted(
          attempt.outcome,
          delivered ? Math.max(0, finality.clock.now() - attempt.effect.createdAt) / 1000 : undefined,
        );
        if (delivered) return;
        logger.warn(
          {
            effect: attempt.effect.name,
            provider: attempt.effect.provider,
            jobId: attempt.effect.jobId,
            outcome: attempt.outcome,
            attempts: attempt.effect.attempts,
            error: attempt.error,
          },
          "effect not delivered",
        );
      },
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
      },
    });
  }

  const reconciler = reconcilerFromConfig(finality, config, logger, providerHealth, context.metrics);
  loops.push({ name: "reconciler", start: () => reconciler.start(), stop: () => reconciler.stop() });

  const retention = createRetentionLoop(finality.store, config.retention, {
    intervalMs: config.retention.intervalMinutes * 60_000,
    now: () => finality.clock.now(),
    onPass: (counts) => {
      for (const [table, rows] of Object.entries(counts))
        if (rows > 0) context.metrics?.rowsPruned(table, rows);
      if (Object.values(counts).some((rows) => rows > 0)) logger.info({ pruned: counts }, "retention pass");
    },
    onError: (error) => logger.warn({ err: error }, "retention pass failed"),
  });
  loops.push({ name: "retention", start: () => retention.start(), stop: () => retention.stop() });

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

/**
 * The reconciler the configuration describes: one lane per provider instance, polling with that
 * instance's adapter. A provider that refuses the API key is logged once (until it accepts it again).
 */
export function reconcilerFromConfig(
  finality: Finality,
  config: FinalityConfig,
  logger: Logger,
  health: ProviderHealth = providerHealth,
  metrics?: ServiceMetrics,
): Reconciler {
  const providers: Record<string, ProviderReconcileOptions> = {};
  const deps = { now: () => finality.clock.now(), health };
  for (const [name, provider] of Object.entries(config.providers)) {
    const reconcile = { ...config.reconcile, ...provider.reconcile };
    const adapter = createProviderAdapter(name, provider, deps);
    providers[name] = {
      minMs: reconcile.minIntervalSeconds * 1000,
      maxMs: reconcile.maxIntervalSeconds * 1000,
      stuckAfterMs: reconcile.stuckAfterSeconds * 1000,
      ...(adapter.poller ? { poller: adapter.poller } : {}),
      ...(adapter.pollTimeoutMs ? { timeoutMs: adapter.pollTimeoutMs } : {}),
    };
  }
  const unsubscribe = health.onAuthFailure((provider, failure) => {
    if (!Object.hasOwn(config.providers, provider)) return;
    logger.error(
      { provider, status: failure.status, configError: true },
      `${failure.message}: check providers.${provider}.apiKey; polls of this provider fail until it is fixed`,
    );
  });
  const reconciler = createReconciler(finality, {
    providers,
    onPoll: (poll) => {
      metrics?.pollFinished(poll.provider, poll.result);
      if (poll.result === "observed" || poll.result === "unpolled") return;
      logger.warn(
        { provider: poll.provider, jobId: poll.job.id, result: poll.result, error: poll.error },
        "reconcile poll",
      );
    },
  });
  return {
    ...reconciler,
    async stop() {
      unsubscribe();
      await reconciler.stop();
    },
  };
}
