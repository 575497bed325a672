import { afterEach, describe, expect, it, vi } from "vitest";
import { manualClock } from "../../src/core/clock.js";
import { FinalityError, isFinalityError } from "../../src/core/errors.js";
import { createFinality } from "../../src/engine/create-finality.js";
import type { Finality } from "../../src/engine/finality.js";
import { createReconciler } from "../../src/engine/reconciler.js";
import { engineOf } from "../helpers/engine.js";
import { tempDir } from "../helpers/temp-dir.js";

// A library user's reconciler lane naming a provider the Finality instance lacks used to end the
// process: `contextFor` threw outside pollOne's `try`, and the tick never awaits a poll, so the
// rejection was unhandled. The lane is refused at construction, and no lane rejects, ever.

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const POLICY = { minMs: 1_000, maxMs: 2_000, stuckAfterMs: 3_600_000 };

function ledger(): { finality: Finality; clock: ReturnType<typeof manualClock> } {
  const dir = tempDir();
  cleanups.push(() => dir.cleanup());
  const clock = manualClock();
  const finality = createFinality({
    store: { sqlite: dir.file("ledger.db") },
    clock,
    providers: { acme: { graceSeconds: 0 } },
  });
  cleanups.push(() => finality.close());
  return { finality, clock };
}

/** Unhandled rejections seen while `body` runs and for one turn of the event loop after it. */
async function unhandledDuring(body: () => Promise<void>): Promise<unknown[]> {
  const seen: unknown[] = [];
  const listener = (reason: unknown) => seen.push(reason);
  process.on("unhandledRejection", listener);
  try {
    await body();
    // Node reports an unhandled rejection once the microtask queue has drained: one macrotask.
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off("unhandledRejection", listener);
  }
  return seen;
}

describe("reconciler lanes and the providers of the ledger", () => {
  it("a lane for a provider the ledger lacks is refused at construction, with the lane's name", () => {
    const { finality } = ledger();
    const poller = async () => ({ kind: "not-found" as const });
    const lane = { ...POLICY, poller };
    let caught: unknown;
    try {
      createReconciler(finality, { providers: { acme: lane, ghost: lane } });
    } catch (error) {
      caught = error;
    }
    expect(isFinalityError(caught, "unknown-provider")).toBe(true);
    expect((caught as FinalityError).message).toContain('reconciler lane "ghost"');
    expect((caught as FinalityError).details).toMatchObject({ provider: "ghost" });
    // The lanes the ledger knows (and the reserved `runs` one) are accepted.
    expect(() => createReconciler(finality, { providers: { acme: lane, runs: POLICY } })).not.toThrow();
  });

  it("a poll whose recording fails in any way is reported as an error, never an unhandled rejection", async () => {
    const { finality, clock } = ledger();
    await finality.register({ provider: "acme", id: "j1" });
    await finality.register({ provider: "acme", id: "j2" });
    clock.advance(1_000);
    // Accepted at construction, then the ledger stops knowing the provider (as a lane whose
    // provider the host forgot would fail): contextFor throws at poll time.
    let refuse = false;
    const engine = engineOf(finality);
    const contextFor = engine.contextFor;
    vi.spyOn(engine, "contextFor").mockImplementation((provider, now) => {
      if (refuse) throw new FinalityError("unknown-provider", `unknown provider "${provider}"`);
      return contextFor(provider, now);
    });
    const results: string[] = [];
    const reconciler = createReconciler(finality, {
      providers: { acme: { ...POLICY, poller: async () => ({ kind: "not-found" }) } },
      random: () => 0,
      onPoll: (event) => {
        results.push(`${event.job.id}:${event.result}`);
        // The caller's own callback throwing must not become a rejection either.
        throw new Error("a logger that throws");
      },
    });
    refuse = true;
    const unhandled = await unhandledDuring(async () => {
      expect(await reconciler.runOnce()).toBe(2);
    });
    expect(unhandled).toEqual([]);
    expect(results.sort()).toEqual(["j1:error", "j2:error"]);
  });

  it("under start() (the tick does not await its polls): a failing poll is reported, not an unhandled rejection", async () => {
    const { finality, clock } = ledger();
    await finality.register({ provider: "acme", id: "j1" });
    clock.advance(1_000);
    let refuse = false;
    const engine = engineOf(finality);
    const contextFor = engine.contextFor;
    vi.spyOn(engine, "contextFor").mockImplementation((provider, now) => {
      if (refuse) throw new FinalityError("unknown-provider", `unknown provider "${provider}"`);
      return contextFor(provider, now);
    });
    let settle: (outcome: string) => void = () => {};
    const outcome = new Promise<string>((resolve) => {
      settle = resolve;
    });
    const unhandled = (reason: unknown) => settle(`unhandled: ${String(reason)}`);
    process.on("unhandledRejection", unhandled);
    const reconciler = createReconciler(finality, {
      providers: { acme: { ...POLICY, poller: async () => ({ kind: "not-found" }) } },
      tickMs: 60_000,
      onPoll: (event) => settle(`${event.job.id}:${event.result}`),
    });
    refuse = true;
    try {
      reconciler.start();
      expect(await outcome).toBe("j1:error");
    } finally {
      process.off("unhandledRejection", unhandled);
      await reconciler.stop();
    }
  });
});
