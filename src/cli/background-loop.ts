import type { FinalityConfig } from "../config/config-schema.js";
import { createDispatcher } from "../engine/dispatcher.js";
import type { Finality } from "../engine/finality.js";
import { createReconciler, type ProviderReconcileOptions } from "../engine/reconciler.js";
import type { Logger } from "../http/request-log.js";
import { createGenericPoller } from "../providers/generic/generic-poller.js";

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
}): BackgroundLoop[] {
  const { finality, config, logger } = context;
  const loops: BackgroundLoop[] = [];

  if (config.effects.length > 0) {
    const dispatcher = createDispatcher(finality, {
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
  const reconciler = createReconciler(finality, {
    providers,
    onPoll: (poll) => {
      if (poll.result === "observed") return;
      logger.warn(
        { provider: poll.provider, jobId: poll.job.id, result: poll.result, error: poll.error },
        "reconcile poll",
      );
    },
  });
  loops.push({ name: "reconciler", start: () => reconciler.start(), stop: () => reconciler.stop() });
  return loops;
}
