import type { FinalityConfig } from "../../src/config/config-schema.js";
import { parseConfig } from "../../src/config/load-config.js";
import { longestComeBackDays } from "../../src/config/tombstone-cover.js";
import { type Random, seededRandom } from "../../src/core/clock.js";
import { int, weighted } from "./sim-random.js";
import { SECRET, SIM } from "./sim-types.js";

/**
 * Issue 33: each schedule runs under a configuration drawn from the space the config check
 * accepts, with weight on the smallest legal values, and parsed by `parseConfig` like `finality
 * serve` parses its file. The promise is the invariant: whatever the check accepts keeps it.
 *
 * The draws come from a stream of their own (as issue 17's do), so that each seed's steps and
 * truth stay what they were. Every draw is named by a bucket ("dimension=value"); the suites
 * fail when a bucket of CONFIG_BUCKETS is never drawn, as they do for fault kinds.
 */

const DAY_S = 86_400;

/** Every bucket a schedule's configuration can be drawn into, dimension by dimension. */
export const CONFIG_DIMENSIONS = {
  "beta.unknownJobs": ["adopt", "registered-only"],
  "acme.discover": ["on", "off"],
  // "off" when discovery is: the lookback of a sweep that never runs is not drawn.
  "acme.discover.lookbackHours": ["off", "smallest", "drawn", "default"],
  // Discovery without polling: acme's jobs settle by webhooks and by what the list shows.
  "acme.polling": ["on", "off"],
  // registered-only only with discovery on: without it, nothing would ever adopt a job never registered.
  "acme.unknownJobs": ["adopt", "registered-only"],
  "ingest.maxClockSkewSeconds": ["0", "small", "default", "largest"],
  "effectDelivery.leaseSeconds": ["smallest", "default", "drawn"],
  retention: ["library-windows", "checked-windows"],
  "retention.deliveriesDays": ["smallest", "default"],
  "retention.tombstonesDays": ["smallest", "default"],
  "retention.parkedDays": ["smallest", "default"],
  "retention.settlementsDays": ["smallest", "default"],
  "render-done.kinds": ["render", "render+thumb"],
  "render-done.on": ["succeeded+failed", "succeeded", "every-terminal"],
  "render-done.providers": ["any", "acme+runs", "beta"],
} as const;
export type ConfigDimension = keyof typeof CONFIG_DIMENSIONS;
export const CONFIG_BUCKETS: readonly string[] = Object.entries(CONFIG_DIMENSIONS).flatMap(([d, values]) =>
  values.map((v) => `${d}=${v}`),
);

export interface SimConfig {
  /** What `finality serve` would run with: the drawn file, parsed and checked. */
  parsed: FinalityConfig;
  /**
   * Retention with the windows a library's own loop may pass (`finality.prune({retention})`, never
   * checked: the step's window for jobs and tombstones alike), or with the checked config's.
   */
  retention: "library-windows" | "checked-windows";
  discover: boolean;
  buckets: string[];
}

/** A sweep of the discovery provider every `intervalMs`, listing what was created in the last `lookbackMs`. */
export interface SimDiscovery {
  intervalMs: number;
  lookbackMs: number;
}

/** Whether acme's jobs are polled (its `poll` key): off only with discovery on. */
export function acmePolled(config: FinalityConfig): boolean {
  const acme = config.providers.acme;
  return acme?.type === "generic" && acme.poll !== undefined;
}

/** The drawn discovery sweeps of `config`, or null when discovery is off. */
export function simDiscovery(config: FinalityConfig): SimDiscovery | null {
  const discover = config.providers.acme?.discover;
  if (discover?.enabled !== true) return null;
  return { intervalMs: discover.intervalSeconds * 1000, lookbackMs: discover.lookbackHours * 3_600_000 };
}

/** The configuration of `seed`'s schedule, given the dispatcher timing the schedule drew. */
export function drawSimConfig(seed: number, effectTimeoutMs: number, effectLeaseMs: number): SimConfig {
  const { raw, retention, discover, buckets } = drawRawConfig(seed, effectTimeoutMs, effectLeaseMs);
  // Every drawn configuration must pass the check: parseConfig throws for one it refuses.
  const parsed = parseConfig(raw, {}, { db: ":memory:" });
  return { parsed, retention, discover, buckets };
}

/** The configuration file of `seed`'s schedule, as a user would write it, before the check. */
export function drawRawConfig(seed: number, effectTimeoutMs: number, effectLeaseMs: number) {
  const random = seededRandom((seed ^ 0xc0f16) >>> 0);
  const buckets: string[] = [];
  const draw = <D extends ConfigDimension>(
    dimension: D,
    weights: Record<(typeof CONFIG_DIMENSIONS)[D][number], number>,
  ): (typeof CONFIG_DIMENSIONS)[D][number] => {
    const value = weighted(random, weights);
    buckets.push(`${dimension}=${value}`);
    return value;
  };
  const unknownJobs = draw("beta.unknownJobs", { adopt: 35, "registered-only": 65 });
  const discover = draw("acme.discover", { on: 80, off: 20 }) === "on";
  const skew = draw("ingest.maxClockSkewSeconds", { "0": 20, small: 20, default: 40, largest: 20 });
  const lease = draw("effectDelivery.leaseSeconds", { smallest: 30, default: 20, drawn: 50 });
  const retention = draw("retention", { "library-windows": 50, "checked-windows": 50 });
  const webhook = { secrets: [SECRET], toleranceSeconds: SIM.webhookToleranceSeconds };
  // Drawn from a stream of their own, so that the draws above and below stay what they were.
  const sweeps = discoverySweeps(seededRandom((seed ^ 0xd15c0) >>> 0), buckets, discover);
  const raw = {
    providers: {
      acme: {
        type: "generic",
        webhook,
        unknownJobs: sweeps?.unknownJobs ?? "adopt",
        ...(sweeps
          ? {
              discover: {
                enabled: true,
                intervalSeconds: sweeps.intervalSeconds,
                lookbackHours: sweeps.lookbackHours,
              },
            }
          : {}),
        // The simulated poller answers; the URL only says that the instance is polled.
        ...(sweeps?.polled === false ? {} : { poll: { url: "http://127.0.0.1:9/jobs/{id}" } }),
      },
      beta: { type: "generic", webhook, unknownJobs },
    },
    ingest: { maxClockSkewSeconds: SKEW_SECONDS[skew](random) },
    effectDelivery: {
      timeoutSeconds: effectTimeoutMs / 1000,
      // The smallest legal lease: a millisecond longer than the timeout.
      ...(lease === "smallest" ? { leaseSeconds: (effectTimeoutMs + 1) / 1000 } : {}),
      ...(lease === "drawn" ? { leaseSeconds: effectLeaseMs / 1000 } : {}),
    },
    retention: retentionWindows(random, draw, sweeps),
    effects: [renderDone(draw)],
  };
  return { raw, retention, discover, buckets };
}

const SKEW_SECONDS = {
  "0": () => 0,
  small: (random: Random) => int(random, 1, 30),
  default: () => 300,
  largest: () => DAY_S,
} as const;

type Draw = <D extends ConfigDimension>(
  dimension: D,
  weights: Record<(typeof CONFIG_DIMENSIONS)[D][number], number>,
) => (typeof CONFIG_DIMENSIONS)[D][number];

/**
 * The retention windows, each at its smallest legal value or its default. Smallest: seconds for
 * the jobs, parked observations and settlements (so that a schedule's few minutes see them go),
 * the webhook tolerance for delivery ids (the check's floor), and for tombstones exactly the
 * jobs' window plus the longest way back (tombstone-cover.ts).
 */
function retentionWindows(
  random: Random,
  draw: Draw,
  sweeps: { intervalSeconds: number; lookbackHours: number } | null,
) {
  const seconds = (min: number, max: number) => int(random, min, max) / DAY_S;
  const deliveriesDays =
    draw("retention.deliveriesDays", { smallest: 60, default: 40 }) === "smallest"
      ? SIM.webhookToleranceSeconds / DAY_S
      : 7;
  const settledJobsDays = seconds(0, 30) || 1 / DAY_S;
  const tombstones = draw("retention.tombstonesDays", { smallest: 70, default: 30 });
  const cover = longestComeBackDays({
    retention: { deliveriesDays, settledJobsDays, tombstonesDays: 0 },
    providers: {
      acme: {
        webhook: { toleranceSeconds: SIM.webhookToleranceSeconds },
        ...(sweeps ? { discover: { enabled: true, lookbackHours: sweeps.lookbackHours } } : {}),
      },
    },
  });
  return {
    deliveriesDays,
    settledJobsDays,
    tombstonesDays: tombstones === "smallest" ? settledJobsDays + cover : 400,
    parkedDays:
      draw("retention.parkedDays", { smallest: 50, default: 50 }) === "smallest" ? seconds(1, 10) : 7,
    settlementsDays:
      draw("retention.settlementsDays", { smallest: 50, default: 50 }) === "smallest" ? seconds(1, 60) : 14,
  };
}

/**
 * The discovery sweeps' interval and lookback: the lookback at its smallest legal value (exactly
 * the interval: every job is created within one sweep's lookback of the next), drawn between
 * that and a day, or the default 48 hours (with the default 300 s between sweeps). With discovery
 * on, acme may also go unpolled (its jobs settle by webhooks and from the list: issue 33's defect
 * 3) and take `registered-only` (an early webhook parked until a sweep adopts the job).
 */
function discoverySweeps(random: Random, buckets: string[], discover: boolean) {
  const lookback = discover ? weighted(random, { smallest: 40, drawn: 30, default: 30 }) : "off";
  buckets.push(`acme.discover.lookbackHours=${lookback}`);
  const polling = discover ? weighted(random, { on: 60, off: 40 }) : "on";
  buckets.push(`acme.polling=${polling}`);
  const polled = polling === "on";
  const unknownJobs = discover ? weighted(random, { adopt: 50, "registered-only": 50 }) : "adopt";
  buckets.push(`acme.unknownJobs=${unknownJobs}`);
  if (lookback === "off") return null;
  if (lookback === "default") return { intervalSeconds: 300, lookbackHours: 48, polled, unknownJobs };
  const intervalSeconds = int(random, 10, 600);
  const lookbackHours =
    lookback === "smallest" ? intervalSeconds / 3_600 : int(random, intervalSeconds, DAY_S) / 3_600;
  return { intervalSeconds, lookbackHours, polled, unknownJobs };
}

/** The kind-filtered effect's filters: kinds, states and providers, each from what the check accepts. */
function renderDone(draw: Draw) {
  const kinds = draw("render-done.kinds", { render: 70, "render+thumb": 30 });
  const on = draw("render-done.on", { "succeeded+failed": 50, succeeded: 25, "every-terminal": 25 });
  const providers = draw("render-done.providers", { any: 60, "acme+runs": 25, beta: 15 });
  return {
    name: "render-done",
    nats: { servers: ["nats://127.0.0.1:4222"], subject: "sim.render", stream: "SIM" },
    kinds: kinds === "render" ? ["render"] : ["render", "thumb"],
    on: {
      "succeeded+failed": ["succeeded", "failed"],
      succeeded: ["succeeded"],
      "every-terminal": ["succeeded", "failed", "cancelled", "expired"],
    }[on],
    ...(providers === "any" ? {} : { providers: providers === "beta" ? ["beta"] : ["acme", "runs"] }),
  };
}

/** Whether the kind-filtered effect fires for a settled job of this provider, kind and state. */
export function renderDoneMatches(
  config: FinalityConfig,
  provider: string,
  kind: string | null,
  state: string,
): boolean {
  const effect = config.effects.find((e) => e.name === "render-done");
  if (effect === undefined || kind === null) return false;
  if (effect.kinds !== undefined && !effect.kinds.includes(kind)) return false;
  if (effect.providers !== undefined && !effect.providers.includes(provider)) return false;
  return (effect.on ?? []).includes(state as never);
}
