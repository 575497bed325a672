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
  const raw = {
    providers: {
      acme: {
        type: "generic",
        webhook,
        unknownJobs: "adopt",
        ...(discover ? { discover: { enabled: true, lookbackHours: 48 } } : {}),
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
    retention: retentionWindows(random, draw, discover),
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
function retentionWindows(random: Random, draw: Draw, discover: boolean) {
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
        ...(discover ? { discover: { enabled: true, lookbackHours: 48 } } : {}),
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
