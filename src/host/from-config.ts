import type { FinalityConfig } from "../config/config-schema.js";
import { longestComeBackDays } from "../config/tombstone-cover.js";
import { RUNS_PROVIDER } from "../core/run-model.js";
import { createDispatcher, type Dispatcher, type DispatcherOptions } from "../engine/dispatcher.js";
import type { EffectDefinition } from "../engine/effect-definitions.js";
import type { Finality, ProviderPolicy } from "../engine/finality.js";
import { engineOf } from "../engine/finality-engine.js";
import {
  createHttpEffectDeliverer,
  type DeliverySigner,
  type EffectTransport,
} from "../engine/http-effect-target.js";
import { createReconciler, type ProviderReconcileOptions, type Reconciler } from "../engine/reconciler.js";
import type { RetentionWindows } from "../engine/retention.js";
import type { Logger } from "../http/request-log.js";
import type { ServiceMetrics } from "../http/service-metrics.js";
import { unpollableCheckFor } from "../providers/pollable-job.js";
import type { ProviderRegistry } from "../providers/provider-registry.js";

// The engine's parts as the configuration describes them, for every host: the Node host
// (host/node, `finality serve`) and the Workers host (host/workers). Nothing here is Node-only.

/** Each provider instance's ledger policy, and the effect definitions. */
export function ledgerOptionsFromConfig(config: FinalityConfig): {
  providers: Record<string, ProviderPolicy>;
  effects: EffectDefinition[];
  graceSeconds: number;
  intentTimeoutSeconds: number;
  maxClockSkewSeconds: number;
} {
  const providers: Record<string, ProviderPolicy> = {};
  for (const [name, provider] of Object.entries(config.providers)) {
    providers[name] = {
      unknownJobs: provider.unknownJobs,
      graceSeconds: provider.reconcile?.graceSeconds ?? config.reconcile.graceSeconds,
      intentTimeoutSeconds: provider.intentTimeoutSeconds ?? config.intentTimeoutSeconds,
    };
    const unpollable = unpollableCheckFor(provider.type, provider);
    if (unpollable !== undefined) providers[name].unpollable = unpollable;
  }
  // A run's mirror job is first checked when it would be stuck: nothing to poll before then.
  providers[RUNS_PROVIDER] = { reconcile: true, graceSeconds: config.reconcile.stuckAfterSeconds };
  const effects: EffectDefinition[] = config.effects.map((effect) => ({
    name: effect.name,
    ...(effect.url ? { url: effect.url } : {}),
    ...(effect.secret ? { secret: effect.secret } : {}),
    ...(effect.nats ? { nats: effect.nats } : {}),
    ...(effect.amqp ? { amqp: effect.amqp } : {}),
    ...(effect.redis ? { redis: effect.redis } : {}),
    ...(effect.format ? { format: effect.format } : {}),
    ...(effect.cloudevents ? { cloudevents: effect.cloudevents } : {}),
    ...(effect.maxMessageBytes !== undefined ? { maxMessageBytes: effect.maxMessageBytes } : {}),
    on: effect.on,
    ...(effect.providers ? { providers: effect.providers } : {}),
    ...(effect.kinds ? { kinds: effect.kinds } : {}),
  }));
  return {
    providers,
    effects,
    graceSeconds: config.reconcile.graceSeconds,
    intentTimeoutSeconds: config.intentTimeoutSeconds,
    maxClockSkewSeconds: config.ingest.maxClockSkewSeconds,
  };
}

/**
 * The outbox dispatcher `effectDelivery` describes; deliveries go over `transport` (fetch by
 * default), signed with `sign` (WebCrypto by default; `finality serve` passes node:crypto's).
 */
export function dispatcherFromConfig(
  finality: Finality,
  config: FinalityConfig,
  context: {
    logger: Logger;
    metrics?: ServiceMetrics;
    transport?: EffectTransport;
    sign?: DeliverySigner;
    /** The broker targets (Node host only: their clients need node:net). */
    targets?: DispatcherOptions["targets"];
    /** A CloudEvents effect's default `source`: this instance. */
    source?: string;
  },
): Dispatcher {
  const { logger } = context;
  const { clock } = engineOf(finality);
  const delivery = config.effectDelivery;
  return createDispatcher(finality, {
    deliverUrl: createHttpEffectDeliverer({
      now: () => clock.now(),
      ...(context.transport ? { transport: context.transport } : {}),
      ...(context.sign ? { sign: context.sign } : {}),
      ...(context.source ? { source: context.source } : {}),
    }),
    ...(context.targets ? { targets: context.targets } : {}),
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
        delivered ? Math.max(0, clock.now() - attempt.effect.createdAt) / 1000 : undefined,
        attempt.destination ?? "none",
      );
      if (delivered) {
        if (attempt.job) context.metrics?.effectDelivered(attempt.effect, attempt.job, clock.now());
        return;
      }
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
}

/**
 * The reconciler the configuration describes: one lane per provider instance, polling with that
 * instance's poller from the registry (the adapters the webhook receivers come from). A provider
 * that refuses the API key is logged once (until it accepts it again).
 */
export function reconcilerFromConfig(
  finality: Finality,
  config: FinalityConfig,
  context: { logger: Logger; providers: ProviderRegistry; metrics?: ServiceMetrics },
): Reconciler {
  const { logger, metrics } = context;
  const { health } = context.providers;
  const providers: Record<string, ProviderReconcileOptions> = {};
  for (const [name, provider] of Object.entries(config.providers)) {
    const reconcile = { ...config.reconcile, ...provider.reconcile };
    const polling = context.providers.pollers.get(name);
    if (polling === undefined) throw new Error(`the provider registry has no provider "${name}"`);
    const { ratePerSecond } = reconcile;
    providers[name] = {
      minMs: reconcile.minIntervalSeconds * 1000,
      maxMs: reconcile.maxIntervalSeconds * 1000,
      stuckAfterMs: reconcile.stuckAfterSeconds * 1000,
      concurrency: reconcile.concurrency,
      ...(ratePerSecond === undefined
        ? {}
        : {
            rateLimit: {
              perSecond: ratePerSecond,
              burst: reconcile.burst ?? Math.max(1, Math.ceil(ratePerSecond)),
            },
          }),
      ...(polling.poller ? { poller: polling.poller } : {}),
      ...(polling.timeoutMs ? { timeoutMs: polling.timeoutMs } : {}),
    };
  }
  // Runs have no status to poll: their lane only flags a run still open after `stuckAfterSeconds`
  // (with the one-time `stuck` effect) and checks it again on the backoff until it ends.
  providers[RUNS_PROVIDER] = {
    minMs: config.reconcile.minIntervalSeconds * 1000,
    maxMs: config.reconcile.maxIntervalSeconds * 1000,
    stuckAfterMs: config.reconcile.stuckAfterSeconds * 1000,
  };
  const unsubscribe = health.onAuthFailure((provider, failure) => {
    if (!Object.hasOwn(config.providers, provider)) return;
    logger.error(
      { provider, status: failure.status, configError: true },
      `${failure.message}: check the credentials of providers.${provider}; polls of this provider fail until it is fixed`,
    );
  });
  const reconciler = createReconciler(finality, {
    providers,
    onPoll: (poll) => {
      metrics?.pollFinished(poll.provider, poll.result);
      if (poll.settled) metrics?.jobSettled(poll.settled);
      if (poll.result === "observed" || poll.result === "unpolled") return;
      const { url, code, status } = poll;
      logger.warn(
        {
          provider: poll.provider,
          jobId: poll.job.id,
          result: poll.result,
          error: poll.error,
          ...(url ? { url } : {}),
          ...(code ? { code } : {}),
          ...(status ? { status } : {}),
        },
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

/**
 * The retention windows of a configuration, with the longest way a pruned job can come back
 * (`comeBackDays`): the pass never prunes a tombstone before it (engine/retention.ts), whatever
 * `tombstonesDays` says. Every host's pass (serve's loop, `finality prune`, the Workers cron) reads this.
 */
export function retentionWindowsFromConfig(config: FinalityConfig): RetentionWindows {
  return { ...config.retention, comeBackDays: longestComeBackDays(config) };
}
