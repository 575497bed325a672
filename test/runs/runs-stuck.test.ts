import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load-config.js";
import { manualClock } from "../../src/core/clock.js";
import { RUNS_PROVIDER } from "../../src/core/run-model.js";
import { createFinality } from "../../src/engine/create-finality.js";
import { ledgerOptionsFromConfig, reconcilerFromConfig } from "../../src/host/from-config.js";
import { createNodeProviders } from "../../src/providers/node-providers.js";
import { createRunService } from "../../src/runs/run-service.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { engineOf } from "../helpers/engine.js";
import { tempDir } from "../helpers/temp-dir.js";
import { SECRET } from "../http/helpers/webhooks.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The ledger, runs and reconciler exactly as `finality serve` wires them from a configuration. */
function serveLike() {
  const dir = tempDir("finality-runs-stuck-");
  cleanups.push(() => dir.cleanup());
  const config = parseConfig(
    {
      reconcile: { stuckAfterSeconds: 60 },
      effects: [{ name: "pager", url: "http://127.0.0.1:9/pager", secret: SECRET, on: ["stuck"] }],
    },
    {},
  );
  const clock = manualClock();
  const finality = createFinality({
    store: createSqliteStore({ path: dir.file("ledger.db") }),
    clock,
    ...ledgerOptionsFromConfig(config),
  });
  cleanups.push(() => finality.close());
  const runs = createRunService({ finality, random: () => 0.5 });
  const silent = { info() {}, warn() {}, error() {} };
  const reconciler = reconcilerFromConfig(finality, config, {
    logger: silent,
    providers: createNodeProviders(config.providers, () => engineOf(finality).clock.now()),
  });
  cleanups.push(() => reconciler.stop());
  const stuckAlerts = async (id: string) =>
    (await engineOf(finality).store.listEffects({ provider: RUNS_PROVIDER, jobId: id })).items.filter(
      (e) => e.trigger === "stuck",
    ).length;
  return { finality, runs, reconciler, clock, stuckAlerts };
}

describe("a run that stays open too long", () => {
  it("is flagged stuck once, after reconcile.stuckAfterSeconds, and a run that ended in time never is", async () => {
    const { finality, runs, reconciler, clock, stuckAlerts } = serveLike();
    const waiting = (await runs.enqueue({ kind: "render" })).run;
    const done = (await runs.enqueue({ kind: "encode" })).run;
    const claimed = await runs.claim({ workerId: "w1", kinds: ["encode"] });
    if (claimed === null) throw new Error("no claim");
    await runs.recordEvent(claimed.attempt.id, {
      generation: claimed.attempt.generation,
      sequence: 1,
      type: "succeeded",
    });
    const mirror = (id: string) => finality.getJob({ provider: RUNS_PROVIDER, id });
    expect((await mirror(waiting.id))?.nextCheckAt).toBe(waiting.createdAt + 60_000);

    clock.advance(59_999);
    expect(await reconciler.runOnce()).toBe(0);
    expect((await mirror(waiting.id))?.stuck).toBe(false);

    clock.advance(1);
    expect(await reconciler.runOnce()).toBe(1);
    expect((await mirror(waiting.id))?.stuck).toBe(true);
    expect(await stuckAlerts(waiting.id)).toBe(1);

    // Checked again on the backoff while it stays open: never a second alert.
    for (let i = 0; i < 5; i++) {
      clock.advance(3_600_000);
      await reconciler.runOnce();
    }
    expect(await stuckAlerts(waiting.id)).toBe(1);
    expect(await stuckAlerts(done.id)).toBe(0);
    expect((await mirror(done.id))?.stuck).toBe(false);

    // Once the run ends, its mirror job is no longer checked.
    await runs.cancel(waiting.id);
    expect(await mirror(waiting.id)).toMatchObject({ state: "cancelled", nextCheckAt: null });
  });
});
