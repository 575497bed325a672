import type { FinalityConfig } from "../config/config-schema.js";
import { FinalityError } from "../core/errors.js";
import type { Finality } from "../engine/finality.js";
import { createPeriodicLoop, type PeriodicLoop } from "../engine/periodic-loop.js";
import type { Logger } from "../http/request-log.js";
import type { ServiceMetrics } from "../http/service-metrics.js";
import {
  type PageProgress,
  type SweepOptions,
  type SweepResult,
  sweepOnce,
} from "../providers/discovery-sweep.js";
import type { ProviderRegistry } from "../providers/provider-registry.js";

/** What a discovery sweep of one configured provider instance needs, from `discover`. */
export function sweepOptionsFromConfig(
  config: FinalityConfig,
  providers: ProviderRegistry,
  only?: string,
): Omit<SweepOptions, "onPage">[] {
  const out: Omit<SweepOptions, "onPage">[] = [];
  for (const [name, provider] of Object.entries(config.providers)) {
    if (only !== undefined && name !== only) continue;
    const discover = provider.discover;
    if (discover?.enabled !== true) continue;
    const lister = providers.adapters.get(name)?.lister;
    if (lister === undefined) {
      throw new FinalityError(
        "invalid-config",
        `config error: providers.${name}.discover: discovery is on, but ${provider.type} instance "${name}" has no list API` +
          (provider.type === "generic" ? " (set discover.url)" : ""),
        { details: { field: `providers.${name}.discover` } },
      );
    }
    out.push({
      provider: name,
      lister,
      pagesPerSweep: discover.pagesPerSweep,
      lookbackMs: discover.lookbackHours * 3_600_000,
      settleFromList: (providers.pollers.get(name)?.poller ?? null) === null,
    });
  }
  return out;
}

/** One loop per provider instance with discovery on: a sweep every `intervalSeconds`, longer after a 429. */
export function discoveryLoopsFromConfig(
  finality: Finality,
  config: FinalityConfig,
  context: { providers: ProviderRegistry; logger: Logger; metrics?: ServiceMetrics | undefined },
): PeriodicLoop[] {
  return sweepOptionsFromConfig(config, context.providers).map((options) => {
    const intervalMs = (config.providers[options.provider]?.discover?.intervalSeconds ?? 300) * 1000;
    const onPage = (page: PageProgress) => {
      context.metrics?.jobsDiscovered(page.provider, page.lagSeconds);
      // Settled from the list, no poll to follow: counted here in finality_detection_delay_seconds.
      for (const job of page.settled) context.metrics?.jobSettled(job);
    };
    return createPeriodicLoop(
      `discovery:${options.provider}`,
      intervalMs,
      async () => {
        const result = await sweepOnce(finality, { ...options, onPage });
        logSweep(context.logger, result);
        return result.failed?.retryAfterMs;
      },
      (error) => context.logger.warn({ err: error, provider: options.provider }, "discovery sweep failed"),
    );
  });
}

function logSweep(logger: Logger, result: SweepResult): void {
  const { provider, pages, listed, adopted, attached, refused } = result;
  if (refused > 0)
    logger.warn({ provider, refused }, "discovery sweep skipped listed ids that break the job id rule");
  if (result.failed) {
    logger.warn(
      { provider, pages, adopted, attached, error: result.failed.error },
      "discovery sweep stopped",
    );
  } else if (adopted > 0 || attached > 0) {
    logger.info({ provider, pages, listed, adopted, attached }, "discovery sweep found jobs");
  }
}
