import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load-config.js";
import { seededRandom } from "../../src/core/clock.js";
import { generateSchedule } from "./schedule.js";
import { CONFIG_BUCKETS, CONFIG_DIMENSIONS, drawRawConfig } from "./sim-config.js";
import { int } from "./sim-random.js";

// Issue 33: the simulator's configurations come from the space the config check accepts, and a
// configuration the promise cannot hold under is refused, naming its keys.

type Raw = ReturnType<typeof drawRawConfig>["raw"];

/** One way out of the accepted space, and the keys its refusal must name. */
interface Refusal {
  name: string;
  apply(raw: Raw, random: () => number): unknown;
  keys: string[];
}

const clone = (raw: Raw): Raw => structuredClone(raw);
const REFUSALS: Refusal[] = [
  {
    name: "lease not longer than the timeout",
    apply: (raw, random) => {
      const out = clone(raw);
      const timeout = out.effectDelivery.timeoutSeconds;
      return { ...out, effectDelivery: { timeoutSeconds: timeout, leaseSeconds: timeout * random() } };
    },
    keys: ["effectDelivery.leaseSeconds", "effectDelivery.timeoutSeconds"],
  },
  {
    name: "tombstones shorter than the jobs' window and the ways back",
    apply: (raw, random) => {
      const out = clone(raw);
      out.retention.tombstonesDays = out.retention.settledJobsDays * random() + 1e-9;
      return out;
    },
    keys: ["retention.tombstonesDays", "retention.settledJobsDays"],
  },
  {
    name: "delivery ids forgotten within the webhook tolerance",
    apply: (raw, random) => {
      const out = clone(raw);
      out.retention.deliveriesDays = ((1 + 298 * random()) / 86_400) as never;
      return out;
    },
    keys: ["retention.deliveriesDays"],
  },
  {
    name: "clock skew beyond a day",
    apply: (raw, random) => ({ ...clone(raw), ingest: { maxClockSkewSeconds: 86_401 + 1e6 * random() } }),
    keys: ["ingest.maxClockSkewSeconds"],
  },
  {
    name: "no parked inbox at all",
    apply: (raw, random) => {
      const out = clone(raw);
      (out.retention as Record<string, number>).parkedDays = random() < 0.5 ? 0 : -1;
      return out;
    },
    keys: ["retention.parkedDays"],
  },
  {
    name: "a settlement feed kept no time",
    apply: (raw) => {
      const out = clone(raw);
      (out.retention as Record<string, number>).settlementsDays = 0;
      return out;
    },
    keys: ["retention.settlementsDays"],
  },
  {
    name: "an effect filtered to a provider that is not configured",
    apply: (raw) => {
      const out = clone(raw);
      out.effects[0] = { ...out.effects[0]!, providers: ["gamma"] };
      return out;
    },
    keys: ["effects.0.providers"],
  },
  {
    name: "a discovery lookback shorter than the time between sweeps",
    apply: (raw, random) => {
      const out = clone(raw);
      const intervalSeconds = 10 + Math.floor(3_000 * random());
      const lookbackHours = (intervalSeconds * (0.01 + 0.98 * random())) / 3_600;
      out.providers.acme = {
        ...out.providers.acme,
        discover: { enabled: true, intervalSeconds, lookbackHours },
      };
      return out;
    },
    keys: ["providers.acme.discover.lookbackHours", "providers.acme.discover.intervalSeconds"],
  },
  {
    name: "an unknown-jobs policy that does not exist",
    apply: (raw) => {
      const out = clone(raw);
      (out.providers.beta as { unknownJobs: string }).unknownJobs = "ignore";
      return out;
    },
    keys: ["providers.beta.unknownJobs"],
  },
];

describe("the simulator's configurations", () => {
  it("are all accepted by the config check, and draw every bucket of every dimension", () => {
    const drawn = new Map<string, number>();
    for (let seed = 1; seed <= 300; seed++) {
      // generateSchedule parses its configuration: it throws for one the check refuses.
      const { config } = generateSchedule(seed);
      expect(config.buckets).toHaveLength(Object.keys(CONFIG_DIMENSIONS).length);
      for (const bucket of config.buckets) drawn.set(bucket, (drawn.get(bucket) ?? 0) + 1);
    }
    expect(CONFIG_BUCKETS.filter((bucket) => !drawn.has(bucket))).toEqual([]);
  });

  it("step out of the accepted space and are refused, naming the keys", () => {
    const random = seededRandom(33);
    for (let i = 0; i < 200; i++) {
      const seed = int(random, 1, 100_000);
      const { raw } = drawRawConfig(seed, int(random, 1_000, 30_000), 120_000);
      const refusal = REFUSALS[i % REFUSALS.length]!;
      const bad = refusal.apply(raw, random);
      let message = "";
      try {
        parseConfig(bad, {}, { db: ":memory:" });
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message, `${refusal.name} (seed ${seed}) was accepted`).not.toBe("");
      for (const key of refusal.keys) expect(message, refusal.name).toContain(key);
    }
  });
});
