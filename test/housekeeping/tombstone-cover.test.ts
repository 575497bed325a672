import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load-config.js";
import { comeBackWindows } from "../../src/config/tombstone-cover.js";
import { manualClock } from "../../src/core/clock.js";
import { isFinalityError } from "../../src/core/errors.js";
import type { ObservationInput } from "../../src/core/validation.js";
import { createFinality } from "../../src/engine/create-finality.js";
import { DEFAULT_RETENTION, pruneOnce } from "../../src/engine/retention.js";
import { retentionWindowsFromConfig } from "../../src/host/from-config.js";
import { engineOf } from "../helpers/engine.js";
import { tempDir } from "../helpers/temp-dir.js";

// Issue 33, defect 5: a tombstone pruned together with its job (or before the job can no longer
// come back) lets a replay, a redelivery or a discovery sweep bring the job back and fire its
// effects again. The config check refuses such windows, naming the keys; the retention pass
// holds the same rule itself for windows that never went through the check.

const DAY = 86_400_000;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function refusal(raw: unknown): string {
  try {
    parseConfig(raw, {});
  } catch (error) {
    expect(isFinalityError(error, "invalid-config")).toBe(true);
    return String((error as Error).message);
  }
  throw new Error("the config was accepted");
}

const hmacProvider = {
  type: "generic",
  webhook: { scheme: "hmac-sha256", header: "x-signature", secrets: ["s3cret"] },
};
const discovering = { type: "openai", apiKey: "k", discover: { enabled: true } };

describe("the config check: a tombstone must outlive every way back of its job", () => {
  it("refuses tombstonesDays equal to settledJobsDays (one pass would delete both), naming the keys", () => {
    const message = refusal({
      providers: { acme: hmacProvider },
      retention: { settledJobsDays: 14, tombstonesDays: 14 },
    });
    expect(message).toContain("retention.tombstonesDays (14)");
    expect(message).toContain("retention.settledJobsDays (14)");
    // The longest way back here: a redelivery (7 days) signed at its last moment (300 s more).
    expect(message).toContain("retention.deliveriesDays + providers.acme.webhook.toleranceSeconds");
  });

  it("refuses a tombstone shorter than a discovery sweep's lookback after the job, naming it", () => {
    const retention = { settledJobsDays: 1, tombstonesDays: 1, deliveriesDays: 1 };
    const message = refusal({ providers: { open: discovering }, retention });
    expect(message).toContain("providers.open.discover.lookbackHours (2 days)");
    // 1 day of the job + 48 h of lookback: 3 days is enough, a little less is not.
    expect(
      refusal({ providers: { open: discovering }, retention: { ...retention, tombstonesDays: 2.99 } }),
    ).toContain("lookbackHours");
    expect(
      parseConfig({ providers: { open: discovering }, retention: { ...retention, tombstonesDays: 3 } }, {})
        .retention.tombstonesDays,
    ).toBe(3);
    // Discovery off: its lookback is no way back.
    const off = { ...discovering, discover: { enabled: false, lookbackHours: 500 } };
    expect(
      parseConfig({ providers: { open: off }, retention: { ...retention, tombstonesDays: 2 } }, {}),
    ).toBeTruthy();
  });

  it("accepts the defaults, and lists every way back longest first", () => {
    const config = parseConfig({ providers: { acme: hmacProvider, open: discovering } }, {});
    expect(comeBackWindows(config).map((w) => [w.keys.join(" + "), w.days])).toEqual([
      ["retention.deliveriesDays + providers.acme.webhook.toleranceSeconds", 7 + 300 / 86_400],
      ["retention.deliveriesDays", 7],
      ["providers.open.discover.lookbackHours", 2],
    ]);
  });

  it("hands the longest way back to the retention pass of every host (retentionWindowsFromConfig)", () => {
    const long = { ...discovering, discover: { enabled: true, lookbackHours: 480 } };
    const config = parseConfig({ providers: { open: long }, retention: { tombstonesDays: 400 } }, {});
    expect(retentionWindowsFromConfig(config)).toMatchObject({ ...config.retention, comeBackDays: 20 });
  });
});

describe("the retention pass never prunes a tombstone while its job can come back", () => {
  function ledger() {
    const dir = tempDir();
    const clock = manualClock(Date.UTC(2026, 0, 1));
    const fired: string[] = [];
    const finality = createFinality({
      store: { sqlite: dir.file("ledger.db") },
      clock,
      // Transactional: no outbox row keeps the job from being pruned, and each run is counted.
      effects: [{ name: "book", on: ["succeeded"], transactional: async (job) => void fired.push(job.id) }],
    });
    cleanups.push(() => dir.cleanup());
    cleanups.push(() => finality.close());
    return { finality, clock, fired };
  }

  // The capture of an hmac-sha256 webhook (no signed timestamp): the same body, so the same
  // delivery id, valid whenever it is sent again.
  const captured: ObservationInput = {
    provider: "acme",
    id: "job-1",
    state: "succeeded",
    source: "webhook",
    deliveryId: "body-hash",
  };

  it("windows that skipped the config check (equal days): the day-15 replay of an hmac webhook fires nothing", async () => {
    const { finality, clock, fired } = ledger();
    expect(await finality.ingest(captured)).toMatchObject({ settled: true, effects: ["book"] });
    clock.advance(15 * DAY);
    const equal = { settledJobsDays: 14, tombstonesDays: 14 };
    // The job goes; its tombstone stays: the job's 14 days + a redelivery's 7 have not passed.
    expect(await finality.prune({ retention: equal })).toMatchObject({ settledJobs: 1, tombstones: 0 });
    expect(await finality.ingest(captured)).toMatchObject({
      applied: false,
      reason: "already-settled-pruned",
      effects: [],
    });
    expect(fired).toEqual(["job-1"]);
    // After them, it goes.
    clock.advance(6.5 * DAY);
    expect(await finality.prune({ retention: equal })).toMatchObject({ tombstones: 1 });
  });

  it("keeps a tombstone for the job's window + comeBackDays (a discovery sweep's lookback)", async () => {
    const { finality, clock } = ledger();
    await finality.ingest(captured);
    const store = engineOf(finality).store;
    const windows = {
      ...DEFAULT_RETENTION,
      settledJobsDays: 1,
      tombstonesDays: 1,
      deliveriesDays: 1,
      comeBackDays: 2,
    };
    clock.advance(2.5 * DAY);
    expect(await pruneOnce(store, windows, clock.now())).toMatchObject({ settledJobs: 1, tombstones: 0 });
    expect(await store.getTombstone(captured)).not.toBeNull();
    clock.advance(1 * DAY);
    expect(await pruneOnce(store, windows, clock.now())).toMatchObject({ tombstones: 1 });
    expect(await store.getTombstone(captured)).toBeNull();
  });
});
