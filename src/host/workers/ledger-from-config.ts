import { createApp } from "../../app/create-app.js";
import type { FinalityConfig } from "../../config/config-schema.js";
import { FinalityError } from "../../core/errors.js";
import type { DashboardReads } from "../../dashboard/dashboard-reads.js";
import type { Dispatcher } from "../../engine/dispatcher.js";
import { finalityOn } from "../../engine/finality.js";
import { engineOf, type FinalityEngine } from "../../engine/finality-engine.js";
import type { IntentJobPlacement } from "../../engine/intent-api.js";
import type { Reconciler } from "../../engine/reconciler.js";
import type { Logger } from "../../http/request-log.js";
import type { ServiceMetrics } from "../../http/service-metrics.js";
import type { SweepOptions } from "../../providers/discovery-sweep.js";
import { providerHealth } from "../../providers/provider-health.js";
import { createProviders } from "../../providers/provider-registry.js";
import { createRunService, type RunService } from "../../runs/run-service.js";
import { runServiceOptionsFrom } from "../../runs/run-service-config.js";
import type { Store } from "../../store/store.js";
import { webVerifiers } from "../../webhooks/web-verifiers.js";
import { sweepOptionsFromConfig } from "../discovery-from-config.js";
import { dispatcherFromConfig, ledgerOptionsFromConfig, reconcilerFromConfig } from "../from-config.js";
import { consoleLogger } from "./console-logger.js";
import { refuseUnsupportedOnWorkers } from "./unsupported-on-workers.js";

/** The service a Worker runs, as the ledger Durable Object (src/cloudflare) holds it. */
export interface WorkersLedger {
  config: FinalityConfig;
  finality: FinalityEngine;
  app: { fetch(request: Request): Response | Promise<Response> };
  reconciler: Reconciler;
  /** Null when no effect is configured or delivery is off. */
  dispatcher: Dispatcher | null;
  /** Runs on the application's own workers: claims, fenced leases; the object's alarm sweeps expiries. */
  runs: RunService;
  /** One discovery sweep per provider instance with `discover.enabled`, run by each cron run. */
  discovery: Omit<SweepOptions, "onPage">[];
  logger: Logger;
}

/**
 * The Workers host: the same app, reconciler and dispatcher as `finality serve` on the given
 * store, with WebCrypto signature checks and signer, `fetch` for effects and console logs.
 * `onEffectsEnqueued` is called after each commit that enqueued effects (the object sets its alarm).
 * `metrics` counts webhooks, polls and effect attempts (the object keeps them in its storage).
 */
export function workersLedgerFromConfig(
  config: FinalityConfig,
  store: Store,
  onEffectsEnqueued: () => void,
  options: {
    /** The shard's durable counters (cloudflare/durable-counters.ts); none when omitted. */
    metrics?: ServiceMetrics;
    /** The dashboard's reads over every shard, for a sharded ledger; the store's when omitted. */
    dashboardReads?: (store: Store) => (request: Request) => DashboardReads | undefined;
    /** Where jobs live when not in this store (a sharded Worker's shards); here when omitted. */
    intentJobPlacement?: IntentJobPlacement;
  } = {},
): WorkersLedger {
  const { metrics, dashboardReads } = options;
  // A Worker is on the internet: without a token anyone could register jobs and read results.
  // (`finality serve` makes the same refusal for any address but loopback.)
  if (config.server.apiToken === undefined)
    throw new FinalityError(
      "invalid-config",
      "config error: server.apiToken: a Worker is reachable from the internet; set the FINALITY_API_TOKEN secret (npx wrangler secret put FINALITY_API_TOKEN)",
      { details: { field: "server.apiToken" } },
    );
  refuseUnsupportedOnWorkers(config);
  const logger = consoleLogger(config.log.level);
  const finality = engineOf(
    finalityOn({
      store,
      ...ledgerOptionsFromConfig(config),
      ...(options.intentJobPlacement ? { intentJobPlacement: options.intentJobPlacement } : {}),
    }),
  );
  // Each adapter built once: the app takes its receiver, the reconciler its poller.
  const providers = createProviders(config, {
    now: () => finality.clock.now(),
    health: providerHealth,
    verifiers: webVerifiers,
  });
  const runs = createRunService({ finality, ...runServiceOptionsFrom(config.workers) });
  const app = createApp({
    finality,
    config,
    logger,
    receivers: providers.receivers,
    runs,
    ...(metrics ? { metrics } : {}),
    ...(dashboardReads ? { dashboardReads: dashboardReads(store) } : {}),
  });
  const reconciler = reconcilerFromConfig(finality, config, {
    logger,
    providers,
    ...(metrics ? { metrics } : {}),
  });
  const discovery = sweepOptionsFromConfig(config, providers);
  const deliver = config.effects.length > 0 && config.effectDelivery.enabled;
  const dispatcher = deliver
    ? dispatcherFromConfig(finality, config, { logger, ...(metrics ? { metrics } : {}) })
    : null;
  if (dispatcher) finality.onEffectsEnqueued(onEffectsEnqueued);
  return { config, finality, app, reconciler, dispatcher, runs, discovery, logger };
}
