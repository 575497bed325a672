import { afterEach, describe, expect, it } from "vitest";
import { manualClock } from "../../src/core/clock.js";
import { createFinality } from "../../src/engine/create-finality.js";
import type { Settlement } from "../../src/store/settlement-feed.js";
import { tempDir } from "../helpers/temp-dir.js";

// `finality.settlements({ kind })` follows a job whose kind came with the intent's attach after
// a webhook had already settled it (the race intents exist to merge): the follower, waiting
// before the attach, is given the job once, by its kind; the unfiltered follower only once.

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe("finality.settlements({ kind }) and a kind that arrives late", () => {
  it("gives the attached job to the kind's follower once, when its kind arrives", async () => {
    const dir = tempDir();
    const finality = createFinality({
      store: { sqlite: dir.file("ledger.db") },
      clock: manualClock(Date.UTC(2026, 0, 1)),
    });
    cleanups.push(() => dir.cleanup());
    cleanups.push(() => finality.close());
    const abort = new AbortController();
    cleanups.push(() => abort.abort());

    await finality.recordIntent({ provider: "acme", key: "order-1", kind: "render" });
    await finality.ingest({ provider: "acme", id: "op-1", state: "succeeded", source: "webhook" });
    const renders = finality.settlements({ kind: "render", signal: abort.signal });
    const all = finality.settlements({ signal: abort.signal });
    const firstOfAll = await all.next();
    expect((firstOfAll.value as Settlement).id).toBe("op-1");
    const pending = renders.next();

    await finality.attachIntent("order-1", "op-1");
    const got = (await pending).value as Settlement;
    expect(got).toMatchObject({ id: "op-1", kind: "render", amendment: true, state: "succeeded" });
    // A second job settles, kind known: both followers get it next, nothing repeated before it.
    await finality.register({ provider: "acme", id: "op-2", kind: "render" });
    await finality.ingest({ provider: "acme", id: "op-2", state: "failed", source: "webhook" });
    expect(((await renders.next()).value as Settlement).id).toBe("op-2");
    expect(((await all.next()).value as Settlement).id).toBe("op-2");
  });
});
