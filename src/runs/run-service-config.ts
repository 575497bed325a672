import type { FinalityConfig } from "../config/config-schema.js";
import type { RunServiceOptions } from "./run-service.js";

/**
 * The run service's options from the configuration's `workers` section: one mapping for every
 * host that builds a run service (`finality serve`, `finality sweep`), so a key cannot reach
 * one and miss the other.
 */
export function runServiceOptionsFrom(
  workers: FinalityConfig["workers"],
): Omit<RunServiceOptions, "finality"> {
  return {
    defaultLeaseSeconds: workers.leaseSeconds,
    defaultMaxAttempts: workers.maxAttempts,
    retry: {
      baseDelayMs: workers.retryBaseSeconds * 1000,
      maxDelayMs: workers.retryMaxSeconds * 1000,
    },
    maxUnstartedReleases: workers.maxUnstartedReleases,
  };
}
