import { afterEach, describe, expect, it } from "vitest";
import { manualClock } from "../../src/core/clock.js";
import { createFinality } from "../../src/engine/create-finality.js";
import type { Finality } from "../../src/engine/finality.js";
import { createReconciler, type ProviderReconcileOptions } from "../../src/engine/reconciler.js";
import { createGenericPoller } from "../../src/providers/generic/generic-poller.js";
import { FakeProvider } from "../../src/testing/fake-provider.js";
import { engineOf } from "../helpers/engine.js";
import { tempDir } from "../helpers/temp-dir.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const policy = { minMs: 30_000, maxMs: 900_000, stuckAfterMs: 6 * 3_600_000 };

async function setup(
  options: { providers?: string[]; stuckAfterMs?: number; latencyMs?: number; file?: string } = {},
) {
  const dir = tempDir();
  cleanups.push(() => dir.cleanup());
  const clock = manualClock();
  const file = options.file ?? dir.file("ledger.db");
  const names = options.providers ?? ["acme"];
  const fakes: Record<string, FakeProvider> = {};
  const reconcile: Record<string, ProviderReconcileOptions> = {};
  for (const name of names) {
    const fake = new FakeProvider({ now: clock.now, latencyMs: options.latencyMs ?? 0 });
    await fake.listen();
    cleanups.push(() => fake.close());
    fakes[name] = fake;
    reconcile[name] = {
      ...policy,
      stuckAfterMs: options.stuckAfterMs ?? policy.stuckAfterMs,
      poller: createGenericPoller(name, { url: `${fake.url}/jobs/{id}` }),
      concurrency: 5,
    };
  }
  const open = () => {
    const finality = createFinality({
      store: { sqlite: file },
      clock,
      graceSeconds: 90,
      effects: [
        { name: "notify", handler: async () => {} },
        { name: "pager", on: ["stuck"], handler: async () => {} },
      ],
    });
    cleanups.push(() => finality.close());
    return { finality, reconciler: createReconciler(finality, { providers: reconcile, random: () => 0 }) };
  };
  return { clock, fakes, file, open, ...open() };
}

async function jobOf(finality: Finality, id: string, provider = "acme") {
  const job = await finality.getJob({ provider, id });
  if (!job) throw new Error(`no job ${id}`);
  return job;
}

describe("reconciler", () => {
  it("waits the grace period, then settles a job whose webhook was lost", async () => {
    const { finality, reconciler, fakes, clock } = await setup();
    fakes.acme?.addJob("j1", [
      { afterMs: 0, state: "running" },
      { afterMs: 10_000, state: "succeeded", result: { ok: 1 } },
    ]);
    await finality.register({ provider: "acme", id: "j1" });
    expect(await reconciler.runOnce()).toBe(0);
    clock.advance(89_999);
    expect(await reconciler.runOnce()).toBe(0);
    clock.advance(1);
    expect(await reconciler.runOnce()).toBe(1);
    const job = await jobOf(finality, "j1");
    expect(job.state).toBe("succeeded");
    expect(job.settledBy).toBe("reconcile");
    expect(job.result).toEqual({ ok: 1 });
    expect(job.nextCheckAt).toBeNull();
    expect((await engineOf(finality).store.listEffects({ jobId: "j1" })).items).toHaveLength(1);
  });

  it("backs off while the job stays open, and never polls a settled job", async () => {
    const { finality, reconciler, fakes, clock } = await setup();
    fakes.acme?.addJob("j2", [{ afterMs: 0, state: "running" }]);
    await finality.register({ provider: "acme", id: "j2" });
    clock.advance(90_000);
    await reconciler.runOnce();
    let job = await jobOf(finality, "j2");
    expect(job.state).toBe("running");
    expect(job.pollAttempts).toBe(1);
    expect(job.nextCheckAt).toBe(clock.now() + policy.minMs);
    clock.set(job.nextCheckAt as number);
    await finality.ingest({
      provider: "acme",
      id: "j2",
      state: "failed",
      source: "webhook",
      deliveryId: "w1",
    });
    expect(await reconciler.runOnce()).toBe(0);
    job = await jobOf(finality, "j2");
    expect(job.state).toBe("failed");
    expect(fakes.acme?.polls.get("j2")).toBe(1);
  });

  it("never lets a poll answer older than an applied webhook overwrite it", async () => {
    const { finality, reconciler, fakes, clock } = await setup({ latencyMs: 0 });
    const fake = fakes.acme as FakeProvider;
    fake.addJob("j3", [{ afterMs: 0, state: "running" }]);
    await finality.register({ provider: "acme", id: "j3" });
    clock.advance(90_000);
    // The webhook saying it succeeded lands while the poll (which still sees running) is in flight.
    const realHandle = fake.stateOf.bind(fake);
    let webhookLanded: Promise<unknown> = Promise.resolve();
    fake.stateOf = (id) => {
      webhookLanded = finality.ingest({
        provider: "acme",
        id,
        state: "succeeded",
        source: "webhook",
        deliveryId: "w-late",
        seq: 9,
      });
      return realHandle(id);
    };
    await reconciler.runOnce();
    await webhookLanded;
    const job = await jobOf(finality, "j3");
    expect(job.state).toBe("succeeded");
    expect(job.settledBy).toBe("webhook");
    const events = await finality.jobEvents({ provider: "acme", id: "j3" });
    const poll = events.find((e) => e.source === "reconcile");
    expect(poll?.applied).toBe(false);
    expect(poll?.reason).toBe("lower-rank");
  });

  it("one poll is one write: the job's version goes up by exactly one per poll recorded", async () => {
    const { finality, reconciler, fakes, clock } = await setup();
    fakes.acme?.addJob("v1", [
      { afterMs: 0, state: "running" },
      { afterMs: 3_600_000, state: "succeeded" },
    ]);
    await finality.register({ provider: "acme", id: "v1" });
    const poll = async () => {
      const before = await jobOf(finality, "v1");
      clock.set(Math.max(clock.now(), before.nextCheckAt as number));
      expect(await reconciler.runOnce()).toBe(1);
      const after = await jobOf(finality, "v1");
      expect(after.version - before.version).toBe(1);
      return after;
    };
    // Applied (pending → running): the observation's write carries the poll's bookkeeping.
    let job = await poll();
    expect(job).toMatchObject({ state: "running", pollAttempts: 1, nextCheckAt: clock.now() + policy.minMs });
    // Not applied (the same state again): the bookkeeping alone.
    job = await poll();
    expect(job).toMatchObject({ state: "running", pollAttempts: 2 });
    (fakes.acme as FakeProvider).failWith = { status: 500 };
    job = await poll();
    expect(job).toMatchObject({ state: "running", pollAttempts: 3 });
    expect(job.lastPollError).not.toBeNull();
    (fakes.acme as FakeProvider).failWith = null;
    clock.advance(3_600_000);
    job = await poll();
    expect(job).toMatchObject({ state: "succeeded", nextCheckAt: null });
  });

  it("records when a poll last asked the provider; a lane with no status API asked nothing", async () => {
    const { finality, reconciler, fakes, clock } = await setup();
    const fake = fakes.acme as FakeProvider;
    fake.addJob("t1", [{ afterMs: 0, state: "running" }]);
    await finality.register({ provider: "acme", id: "t1" });
    expect((await jobOf(finality, "t1")).lastPolledAt).toBeNull();
    clock.advance(90_000);
    expect(await reconciler.runOnce()).toBe(1);
    let job = await jobOf(finality, "t1");
    expect(job).toMatchObject({ pollAttempts: 1, lastPolledAt: clock.now() });
    // A poll that fails asked the provider too.
    fake.failWith = { status: 500 };
    clock.set(job.nextCheckAt as number);
    expect(await reconciler.runOnce()).toBe(1);
    job = await jobOf(finality, "t1");
    expect(job).toMatchObject({ pollAttempts: 2, lastPolledAt: clock.now() });
    expect(job.lastPollError).not.toBeNull();
    // No poller (a runs' mirror job's lane): the poll is counted, the provider was not asked.
    const unpolled = createReconciler(finality, { providers: { acme: policy }, random: () => 0 });
    const askedAt = job.lastPolledAt;
    clock.set(job.nextCheckAt as number);
    expect(await unpolled.runOnce()).toBe(1);
    job = await jobOf(finality, "t1");
    expect(job).toMatchObject({ pollAttempts: 3, lastPolledAt: askedAt });
    expect(fake.polls.get("t1")).toBe(2);
  });

  it("a poll that applies a state and flags the job stuck is still one write", async () => {
    const { finality, reconciler, fakes, clock } = await setup({ stuckAfterMs: 60_000 });
    fakes.acme?.addJob("v2", [{ afterMs: 0, state: "running" }]);
    await finality.register({ provider: "acme", id: "v2" });
    clock.advance(90_000);
    expect(await reconciler.runOnce()).toBe(1);
    const job = await jobOf(finality, "v2");
    expect(job).toMatchObject({ state: "running", stuck: true, pollAttempts: 1, version: 2 });
    const events = await finality.jobEvents({ provider: "acme", id: "v2" });
    expect(events.map((e) => [e.source, e.state, e.applied])).toEqual([
      ["api", "pending", true],
      ["reconcile", "running", true],
      ["reconcile", "running", true],
    ]);
    expect((await engineOf(finality).store.listEffects({ jobId: "v2" })).items.map((e) => e.name)).toEqual([
      "pager",
    ]);
  });

  it("honours 429 Retry-After, and counts a failing poll against that job only", async () => {
    const { finality, reconciler, fakes, clock } = await setup();
    fakes.acme?.addJob("j4", [{ afterMs: 0, state: "running" }]);
    await finality.register({ provider: "acme", id: "j4" });
    clock.advance(90_000);
    (fakes.acme as FakeProvider).failWith = { status: 429, retryAfterSeconds: 1200 };
    expect(await reconciler.runOnce()).toBe(1);
    const job = await jobOf(finality, "j4");
    expect(job.state).toBe("pending");
    expect(job.pollAttempts).toBe(1);
    expect(job.nextCheckAt).toBe(clock.now() + 1_200_000);
  });

  it("records a provider 404 as an anomaly, not a state", async () => {
    const { finality, reconciler, clock } = await setup();
    await finality.register({ provider: "acme", id: "ghost" });
    clock.advance(90_000);
    await reconciler.runOnce();
    const job = await jobOf(finality, "ghost");
    expect(job.state).toBe("pending");
    expect(job.anomaly).toBe("provider-404");
    const events = await finality.jobEvents({ provider: "acme", id: "ghost" });
    expect(events.filter((e) => e.reason === "not-found")).toHaveLength(1);
  });

  it("flags a stuck job and alerts exactly once, across restarts, and clears the flag when it settles", async () => {
    const ctx = await setup({ stuckAfterMs: 600_000 });
    const fake = ctx.fakes.acme as FakeProvider;
    fake.addJob("j5", [{ afterMs: 0, state: "running" }]);
    await ctx.finality.register({ provider: "acme", id: "j5" });
    for (let i = 0; i < 4; i++) {
      ctx.clock.advance(900_000);
      await ctx.reconciler.runOnce();
    }
    await ctx.finality.close();
    const reopened = ctx.open();
    for (let i = 0; i < 3; i++) {
      ctx.clock.advance(900_000);
      await reopened.reconciler.runOnce();
    }
    let job = await jobOf(reopened.finality, "j5");
    expect(job.stuck).toBe(true);
    expect(job.pollAttempts).toBe(7);
    const alerts = (await engineOf(reopened.finality).store.listEffects({ jobId: "j5" })).items;
    expect(alerts.map((a) => [a.name, a.trigger])).toEqual([["pager", "stuck"]]);
    const stuckEvents = (await reopened.finality.jobEvents({ provider: "acme", id: "j5" })).filter(
      (e) => (e.detail as { stuck?: boolean } | null)?.stuck,
    );
    expect(stuckEvents).toHaveLength(1);
    await reopened.finality.ingest({
      provider: "acme",
      id: "j5",
      state: "succeeded",
      source: "webhook",
      deliveryId: "w5",
    });
    job = await jobOf(reopened.finality, "j5");
    expect(job.stuck).toBe(false);
    const effects = (await engineOf(reopened.finality).store.listEffects({ jobId: "j5" })).items;
    expect(effects.map((e) => e.name).sort()).toEqual(["notify", "pager"]);
  });

  it("does not let a slow provider delay another provider's polls", async () => {
    const { finality, fakes, clock } = await setup({ providers: ["slow", "fast"] });
    (fakes.slow as FakeProvider).latencyMs = 60_000;
    for (let i = 0; i < 5; i++) {
      fakes.slow?.addJob(`s${i}`, [{ afterMs: 0, state: "succeeded" }]);
      fakes.fast?.addJob(`f${i}`, [{ afterMs: 0, state: "succeeded" }]);
      await finality.register({ provider: "slow", id: `s${i}` });
      await finality.register({ provider: "fast", id: `f${i}` });
    }
    clock.advance(90_000);
    const reconciler = createReconciler(finality, {
      providers: {
        slow: {
          ...policy,
          poller: createGenericPoller("slow", { url: `${fakes.slow?.url}/jobs/{id}` }),
          timeoutMs: 120_000,
        },
        fast: { ...policy, poller: createGenericPoller("fast", { url: `${fakes.fast?.url}/jobs/{id}` }) },
      },
      tickMs: 10,
    });
    reconciler.start();
    cleanups.push(() => {
      (fakes.slow as FakeProvider).latencyMs = 0;
    });
    // Wait, by condition, until every fast job has settled while the slow polls are still in flight.
    for (;;) {
      const page = await finality.listJobs({ provider: "fast", state: "succeeded" });
      if (page.items.length === 5) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect((await finality.listJobs({ provider: "slow", state: "succeeded" })).items).toHaveLength(0);
    expect([...(fakes.slow as FakeProvider).polls.values()].reduce((a, b) => a + b, 0)).toBe(5);
    await fakes.slow?.close();
    await reconciler.stop();
  });

  it("keeps a pass within `maxPolls` across providers, and every provider gets a share", async () => {
    const { finality, reconciler, fakes, clock } = await setup({ providers: ["a", "b"] });
    for (const provider of ["a", "b"])
      for (let i = 0; i < 30; i++) {
        fakes[provider]?.addJob(`${provider}${i}`, [{ afterMs: 0, state: "succeeded" }]);
        await finality.register({ provider, id: `${provider}${i}` });
      }
    clock.advance(90_000);
    const polls = (provider: string) =>
      [...(fakes[provider] as FakeProvider).polls.values()].reduce((a, b) => a + b, 0);
    expect(await reconciler.runOnce(undefined, { maxPolls: 12 })).toBe(12);
    expect(polls("a") + polls("b")).toBe(12);
    expect(polls("a")).toBeGreaterThan(0);
    expect(polls("b")).toBeGreaterThan(0);
    // The next passes resume with what is still due, and the last one takes the remainder.
    let total = 12;
    while (total < 60) total += await reconciler.runOnce(undefined, { maxPolls: 12 });
    expect(total).toBe(60);
    expect(polls("a") + polls("b")).toBe(60);
  });

  it("reaches a provider past the first `maxPolls` worth of lanes when only it has jobs due", async () => {
    // Six lanes of 5 slots each against a budget of 12: claiming them all at once let the first
    // lanes hold the whole budget while they found nothing due, and the pass ended with 0 polls,
    // so the last providers' jobs were never polled on Workers (issue 32, discovery-polls-settle).
    const names = ["a", "b", "c", "d", "e", "f"];
    const { finality, reconciler, fakes, clock } = await setup({ providers: names });
    fakes.f?.addJob("f0", [{ afterMs: 0, state: "succeeded" }]);
    await finality.register({ provider: "f", id: "f0" });
    clock.advance(90_000);
    expect(await reconciler.runOnce(undefined, { maxPolls: 12 })).toBe(1);
    expect((await jobOf(finality, "f0", "f")).state).toBe("succeeded");
  });

  it("shares `maxPolls` over every provider with jobs due, across passes", async () => {
    // More providers with due jobs than one pass can serve: each pass starts with another lane, so
    // none waits behind the others' backlog for good.
    const names = ["a", "b", "c", "d", "e", "f"];
    const { finality, reconciler, fakes, clock } = await setup({ providers: names });
    for (const provider of names)
      for (let i = 0; i < 20; i++) {
        fakes[provider]?.addJob(`${provider}${i}`, [{ afterMs: 0, state: "succeeded" }]);
        await finality.register({ provider, id: `${provider}${i}` });
      }
    clock.advance(90_000);
    const polls = (provider: string) =>
      [...(fakes[provider] as FakeProvider).polls.values()].reduce((a, b) => a + b, 0);
    for (let pass = 0; pass < 3; pass++)
      expect(await reconciler.runOnce(undefined, { maxPolls: 12 })).toBe(12);
    for (const provider of names) expect(polls(provider), provider).toBeGreaterThan(0);
  });
});

describe("reconciler.stop()", () => {
  it("waits for a claim in progress and its polls, so nothing polls after it resolves", async () => {
    const { finality, clock, fakes, reconciler } = await setup();
    fakes.acme?.addJob("j1", [{ afterMs: 0, state: "succeeded" }]);
    await finality.register({ provider: "acme", id: "j1" });
    clock.advance(90_000);
    reconciler.start();
    // Stopped while the first claim is still waiting for its commit.
    await reconciler.stop();
    const pollsAtStop = fakes.acme?.polls.get("j1") ?? 0;
    expect(pollsAtStop).toBe(1);
    expect((await jobOf(finality, "j1")).state).toBe("succeeded");
  });
});
