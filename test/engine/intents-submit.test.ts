import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createFinality } from "../../src/engine/create-finality.js";
import { createDispatcher } from "../../src/engine/dispatcher.js";
import type { EffectDelivery } from "../../src/engine/effect-definitions.js";
import type { Finality } from "../../src/engine/finality.js";
import { type TempDir, tempDir } from "../helpers/temp-dir.js";

// finality.submit: record, call, attach, in one call of the library, on a SQLite file.

let dir: TempDir;
let finality: Finality;
let now = Date.UTC(2026, 0, 1);
const delivered: EffectDelivery[] = [];
beforeEach(() => {
  dir = tempDir("finality-submit-");
  delivered.length = 0;
  finality = createFinality({
    store: { sqlite: dir.file("ledger.db") },
    providers: { acme: { intentTimeoutSeconds: 30 }, other: {} },
    intentTimeoutSeconds: 120,
    clock: { now: () => now },
    effects: [{ name: "alert", on: ["orphaned"], handler: async (d) => void delivered.push(d) }],
  });
});
afterEach(async () => {
  await finality.close();
  dir.cleanup();
});

describe("finality.submit", () => {
  it("records the intent, calls the provider with its tag and idempotency key, attaches the id", async () => {
    const calls: unknown[] = [];
    const outcome = await finality.submit({ provider: "acme", key: "o-1", kind: "batch" }, async (call) => {
      calls.push(call);
      // The intent is on disk before the provider is called.
      expect(await finality.getIntent("o-1")).toMatchObject({ jobId: null });
      return { id: "batch_1" };
    });
    const intent = await finality.getIntent("o-1");
    expect(calls).toEqual([{ key: "o-1", tag: "o-1", idempotencyKey: intent?.idempotencyKey }]);
    expect(outcome.job).toMatchObject({ provider: "acme", id: "batch_1", kind: "batch", registered: true });
    expect(intent).toMatchObject({ jobId: "batch_1", attachedBy: "library" });
    // Submitted again (a retry after a timeout): answered from the ledger, the provider is not called.
    const again = await finality.submit({ provider: "acme", key: "o-1", kind: "batch" }, async () => {
      throw new Error("must not be called");
    });
    expect(again.attached).toBe(false);
    expect(again.job.id).toBe("batch_1");
  });

  it("a call that fails leaves an open intent; a retry passes the same idempotency key", async () => {
    const keys: string[] = [];
    await expect(
      finality.submit({ provider: "acme", key: "o-2" }, async (call) => {
        keys.push(call.idempotencyKey);
        throw new Error("provider timed out");
      }),
    ).rejects.toThrow("provider timed out");
    expect(await finality.getIntent("o-2")).toMatchObject({ jobId: null, orphanedAt: null });
    await finality.submit({ provider: "acme", key: "o-2" }, async (call) => {
      keys.push(call.idempotencyKey);
      return "j-2";
    });
    expect(new Set(keys).size).toBe(1);
    await expect(finality.submit({ provider: "acme", key: "o-3" }, async () => "")).rejects.toThrow(/no id/);
  });

  it("uses the provider's timeout, else the ledger's; an orphaned intent's alert is delivered once with the intent", async () => {
    await finality.recordIntent({ provider: "acme", key: "a" });
    await finality.recordIntent({ provider: "other", key: "b", kind: "k", metadata: { x: 1 } });
    now += 30_000;
    expect((await finality.flagOrphanedIntents()).map((i) => i.key)).toEqual(["a"]);
    now += 90_000;
    expect((await finality.flagOrphanedIntents()).map((i) => i.key)).toEqual(["b"]);
    expect(await finality.flagOrphanedIntents()).toEqual([]);
    const dispatcher = createDispatcher(finality);
    expect(await dispatcher.runOnce()).toBe(2);
    expect(await dispatcher.runOnce()).toBe(0);
    const b = delivered.find((d) => d.intent?.key === "b");
    expect(b).toMatchObject({
      type: "intent.orphaned",
      effect: "alert",
      intent: { provider: "other", kind: "k" },
    });
    expect(b?.job).toMatchObject({ provider: "other", id: "b", kind: "k", metadata: { x: 1 } });
    expect(delivered).toHaveLength(2);
  });
});
