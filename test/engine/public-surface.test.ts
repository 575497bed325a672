import { afterEach, describe, expect, expectTypeOf, it } from "vitest";
import { manualClock } from "../../src/core/clock.js";
import { FinalityError } from "../../src/core/errors.js";
import { createFinality } from "../../src/engine/create-finality.js";
import type { Finality } from "../../src/engine/finality.js";
import { engineOf } from "../../src/engine/finality-engine.js";
import type * as PublicEntry from "../../src/index.js";
import { tempDir } from "../helpers/temp-dir.js";

const DAY = 86_400_000;
const INTERNALS = [
  "jobWaiters",
  "store",
  "clock",
  "effects",
  "ingestTrusted",
  "contextFor",
  "announceEffects",
] as const;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function sqliteLedger() {
  const dir = tempDir();
  const clock = manualClock(Date.UTC(2026, 0, 1));
  const finality = createFinality({ store: { sqlite: dir.file("ledger.db") }, clock });
  cleanups.push(() => dir.cleanup());
  cleanups.push(() => finality.close());
  return { finality, clock };
}

describe("the public Finality type", () => {
  it("holds the ledger's operations and none of the engine's wiring (checked by tsc)", () => {
    // `npx tsc --noEmit` compiles this file: putting any of these back on `Finality` fails it.
    expectTypeOf<Finality>().not.toHaveProperty("store");
    expectTypeOf<Finality>().not.toHaveProperty("clock");
    expectTypeOf<Finality>().not.toHaveProperty("effects");
    expectTypeOf<Finality>().not.toHaveProperty("ingestTrusted");
    expectTypeOf<Finality>().not.toHaveProperty("contextFor");
    expectTypeOf<Finality>().not.toHaveProperty("announceEffects");
    expectTypeOf<Finality>().not.toHaveProperty("jobWaiters");
    expectTypeOf<Finality>().toHaveProperty("prune");
    expectTypeOf<Finality>().toHaveProperty("onEffectsEnqueued");
    // The `finality` entry does not hand out the accessor.
    expectTypeOf<typeof PublicEntry>().not.toHaveProperty("engineOf");
  });

  it("carries no internals at run time either: its keys are the public operations", () => {
    const { finality } = sqliteLedger();
    for (const name of INTERNALS) expect(Object.keys(finality)).not.toContain(name);
    expect(Object.keys(finality).sort()).toEqual(
      [
        "attachIntent",
        "close",
        "flagOrphanedIntents",
        "getIntent",
        "getJob",
        "ingest",
        "jobEvents",
        "listJobs",
        "onEffectsEnqueued",
        "prune",
        "recordIntent",
        "register",
        "settlements",
        "submit",
        "waitFor",
      ].sort(),
    );
  });
});

describe("engineOf", () => {
  it("answers the engine behind a Finality, and the engine for an engine", () => {
    const { finality, clock } = sqliteLedger();
    const engine = engineOf(finality);
    expect(engine.clock).toBe(clock);
    expect(engineOf(engine)).toBe(engine);
  });

  it("refuses a copy or a stand-in with invalid-config, not a later missing-store crash", () => {
    const { finality } = sqliteLedger();
    const copy = { ...finality };
    expect(() => engineOf(copy)).toThrowError(FinalityError);
    expect(() => engineOf(copy)).toThrowError(/not a Finality instance/);
    try {
      engineOf(copy);
    } catch (error) {
      expect((error as FinalityError).code).toBe("invalid-config");
    }
  });
});

describe("finality.prune on SQLite", () => {
  async function settledJob(finality: Finality, id: string) {
    await finality.ingest({
      provider: "acme",
      id,
      state: "succeeded",
      source: "webhook",
      deliveryId: `d-${id}`,
    });
  }

  it("deletes a settled job past the default window at the ledger's time, not before", async () => {
    const { finality, clock } = sqliteLedger();
    await settledJob(finality, "job-1");
    clock.advance(13 * DAY);
    expect((await finality.prune()).settledJobs).toBe(0);
    expect(await finality.getJob({ provider: "acme", id: "job-1" })).not.toBeNull();
    clock.advance(2 * DAY);
    const counts = await finality.prune();
    expect(counts.settledJobs).toBe(1);
    expect(await finality.getJob({ provider: "acme", id: "job-1" })).toBeNull();
  });

  it("takes windows over the defaults, and a dry run deletes nothing", async () => {
    const { finality, clock } = sqliteLedger();
    await settledJob(finality, "job-2");
    clock.advance(2 * DAY);
    const dry = await finality.prune({ retention: { settledJobsDays: 1 }, dryRun: true });
    expect(dry.settledJobs).toBe(1);
    expect(await finality.getJob({ provider: "acme", id: "job-2" })).not.toBeNull();
    expect((await finality.prune({ retention: { settledJobsDays: 1 } })).settledJobs).toBe(1);
    expect(await finality.getJob({ provider: "acme", id: "job-2" })).toBeNull();
  });
});
