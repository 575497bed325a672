import type { FinalityConfig } from "../config/config-schema.js";
import { createDispatcher } from "../engine/dispatcher.js";
import type { Finality } from "../engine/finality.js";
import { createReconciler, type ProviderReconcileOptions, type Reconciler } from "../engine/reconciler.js";
import type { Logger } from "../http/request-log.js";
import { createGenericPoller } from "../providers/generic/generic-poller.js";
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
}): BackgroundLoop[] {
  const { finality, config, logger } = context;
  const loops: BackgroundLoop[] = [];
  const delivery = config.effectDelivery;

  if (config.effects.length > 0 && delivery.enabled) {
    const dispatcher = createDispatcher(finality, {
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
        if (attempt.outcome === "delivered") return;
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

  const reconciler = reconcilerFromConfig(finality, config, logger);
  loops.push({ name: "reconciler", start: () => reconciler.start(), stop: () => reconciler.stop() });

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

/** The reconciler the configuration describes: one lane per provider instance. */
export function reconcilerFromConfig(finality: Finality, config: FinalityConfig, logger: Logger): Reconciler {
  const providers: Record<string, ProviderReconcileOptions> = {};
  for (const [name, provider] of Object.entries(config.providers)) {
    const reconcile = { ...config.reconcile, ...provider.reconcile };
    providers[name] = {
      minMs: reconcile.minIntervalSeconds * 1000,
      maxMs: reconcile.maxIntervalSeconds * 1000,
      stuckAfterMs: reconcile.stuckAfterSeconds * 1000,
      ...(provider.poll
        ? {
            poller: createGenericPoller(name, {
              url: provider.poll.url,
              headers: provider.poll.headers ?? {},
            }),
            ...(provider.poll.timeoutSeconds ? { timeoutMs: provider.poll.timeoutSeconds * 1000 } : {}),
          }
        : {}),
    };
  }
  return createReconciler(finality, {
    providers,
    onPoll: (poll) => {
      if (poll.result === "observed") return;
      logger.warn(
        { provider: poll.provider, jobId: poll.job.id, result: poll.result, error: poll.error },
        "reconcile poll",
      );
    },
  });
}
