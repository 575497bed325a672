import { copyFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { manualClock } from "../../src/core/clock.js";
import { createFinality } from "../../src/engine/create-finality.js";
import { createDispatcher } from "../../src/engine/dispatcher.js";
import { effectIdempotencyKey } from "../../src/engine/effect-definitions.js";
import { DEFAULT_RETENTION, pruneOnce } from "../../src/engine/retention.js";
import { engineOf } from "../helpers/engine.js";
import { T0 } from "../helpers/records.js";
import { type TempDir, tempDir } from "../helpers/temp-dir.js";

let dir: TempDir | null = null;
afterEach(() => {
  dir?.cleanup();
  dir = null;
});

describe("effect idempotency keys", () => {
  it("are a function of provider, job id, effect and trigger, and of nothing else", () => {
    const key = effectIdempotencyKey("acme", "job-1", "notify", "succeeded");
    expect(key).toMatch(/^fin_[0-9a-f]{32}$/);
    expect(effectIdempotencyKey("acme", "job-1", "notify", "succeeded")).toBe(key);
    const others = [
      effectIdempotencyKey("acme2", "job-1", "notify", "succeeded"),
      effectIdempotencyKey("acme", "job-2", "notify", "succeeded"),
      effectIdempotencyKey("acme", "job-1", "bill", "succeeded"),
      effectIdempotencyKey("acme", "job-1", "notify", "failed"),
      // Field boundaries count: "ac" + "mejob-1" is not "acme" + "job-1".
      effectIdempotencyKey("ac", "mejob-1", "notify", "succeeded"),
    ];
    expect(new Set([key, ...others]).size).toBe(6);
  });

  it("are the keys every earlier version gave: rows enqueued before an upgrade keep theirs", () => {
    // Computed by the build before node:crypto hashed them (@noble/hashes alone): a receiver
    // dedupes on these, so a change of derivation would deliver every pending effect twice.
    expect(effectIdempotencyKey("acme", "job-1", "notify", "succeeded")).toBe(
      "fin_03104a380714da6a8485231ce1a8d376",
    );
    expect(effectIdempotencyKey("acmé", "jöb-\ud800", "notify", "succeeded")).toBe(
      "fin_457a03cca186fb0f5a34fb5b55d7094f",
    );
  });

  /** A ledger on `file` whose one effect records the key of every delivery it receives. */
  function ledger(file: string, clock: ReturnType<typeof manualClock>, keys: string[]) {
    return createFinality({
      store: { sqlite: file },
      clock,
      effects: [
        { name: "publish", on: ["succeeded"], handler: async (d) => void keys.push(d.idempotencyKey) },
      ],
    });
  }
  const settle = { provider: "acme", id: "job-1", state: "succeeded", source: "webhook" } as const;

  it("stay the same when the effect is enqueued again after retention forgot the job", async () => {
    dir = tempDir();
    const clock = manualClock(T0);
    const keys: string[] = [];
    const finality = ledger(dir.file("ledger.db"), clock, keys);
    try {
      await finality.ingest({ ...settle, deliveryId: "d1" });
      await createDispatcher(finality).runOnce();
      clock.advance((DEFAULT_RETENTION.settledJobsDays + 1) * 86_400_000);
      expect(await pruneOnce(engineOf(finality).store, DEFAULT_RETENTION, clock.now())).toMatchObject({
        settledJobs: 1,
      });
      // Its tombstone answers a late redelivery for as long as it is kept...
      expect(await finality.ingest({ ...settle, deliveryId: "d1" })).toMatchObject({
        reason: "already-settled-pruned",
      });
      clock.advance(DEFAULT_RETENTION.tombstonesDays * 86_400_000);
      expect(await pruneOnce(engineOf(finality).store, DEFAULT_RETENTION, clock.now())).toMatchObject({
        tombstones: 1,
      });
      // ...and past it, an even later one adopts the job again: the effect keeps its key.
      expect(await finality.ingest({ ...settle, deliveryId: "d1" })).toMatchObject({
        applied: true,
        settled: true,
      });
      await createDispatcher(finality).runOnce();
      expect(keys).toHaveLength(2);
      expect(keys[1]).toBe(keys[0]);
    } finally {
      await finality.close();
    }
  });

  it("stay the same after a restore from a backup taken before the job settled", async () => {
    dir = tempDir();
    const file = dir.file("ledger.db");
    const clock = manualClock(T0);
    const keys: string[] = [];
    let finality = ledger(file, clock, keys);
    await finality.register({ provider: "acme", id: "job-1" });
    await finality.close();
    copyFileSync(file, dir.file("backup.db"));

    finality = ledger(file, clock, keys);
    await finality.ingest({ ...settle, deliveryId: "d1" });
    await createDispatcher(finality).runOnce();
    await finality.close();

    // Restore: the settlement and its effect row are gone; the sender redelivers.
    copyFileSync(dir.file("backup.db"), file);
    finality = ledger(file, clock, keys);
    try {
      expect((await finality.getJob({ provider: "acme", id: "job-1" }))?.state).toBe("pending");
      await finality.ingest({ ...settle, deliveryId: "d1" });
      await createDispatcher(finality).runOnce();
      expect(keys).toHaveLength(2);
      expect(keys[1]).toBe(keys[0]);
    } finally {
      await finality.close();
    }
  });
});
