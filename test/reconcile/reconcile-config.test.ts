import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load-config.js";
import { FakeProvider } from "../../src/testing/fake-provider.js";
import { type ProviderApp, providerApp } from "../providers/helpers/provider-app.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function fake(latencyMs = 0): Promise<FakeProvider> {
  const provider = new FakeProvider({ latencyMs });
  await provider.listen();
  cleanups.push(() => provider.close());
  return provider;
}

async function app(providers: Record<string, Record<string, unknown>>): Promise<ProviderApp> {
  const started = await providerApp(providers);
  cleanups.push(() => started.close());
  return started;
}

async function openJobs(
  app: ProviderApp,
  provider: string,
  fake: FakeProvider,
  count: number,
): Promise<void> {
  for (let i = 0; i < count; i++) {
    fake.addJob(`${provider}-${i}`, [{ afterMs: 0, state: "running" }]);
    await app.register(provider, `${provider}-${i}`);
  }
}

const generic = (fake: FakeProvider, reconcile: Record<string, unknown>) => ({
  type: "generic",
  poll: { url: `${fake.url}/jobs/{id}` },
  reconcile,
});

describe("reconcile limits from the configuration", () => {
  it("polls each provider instance with its own `concurrency`", async () => {
    // Slow answers (300 ms) keep every poll a lane starts in flight together.
    const narrow = await fake(300);
    const wide = await fake(300);
    const ledger = await app({
      narrow: generic(narrow, { concurrency: 2 }),
      wide: generic(wide, { concurrency: 6 }),
    });
    await openJobs(ledger, "narrow", narrow, 6);
    await openJobs(ledger, "wide", wide, 6);
    expect(await ledger.reconciler.runOnce()).toBe(12);
    expect(narrow.peakInFlight).toBeLessThanOrEqual(2);
    // The same measure sees more at once where more is allowed: the limit above is not an accident.
    expect(wide.peakInFlight).toBeGreaterThan(2);
  });

  it("keeps to `ratePerSecond` and `burst`: a pass takes what the bucket holds, the rest stay due", async () => {
    const limited = await fake();
    const free = await fake();
    const ledger = await app({
      limited: generic(limited, { ratePerSecond: 0.001, burst: 3 }),
      free: generic(free, {}),
    });
    await openJobs(ledger, "limited", limited, 8);
    await openJobs(ledger, "free", free, 8);
    expect(await ledger.reconciler.runOnce()).toBe(3 + 8);
    expect([...limited.polls.values()].reduce((a, b) => a + b, 0)).toBe(3);
    expect([...free.polls.values()].reduce((a, b) => a + b, 0)).toBe(8);
  });

  it("polls at a rate below one a second (a bucket of one token)", async () => {
    const slow = await fake();
    const ledger = await app({ slow: generic(slow, { ratePerSecond: 0.5 }) });
    await openJobs(ledger, "slow", slow, 3);
    expect(await ledger.reconciler.runOnce()).toBe(1);
  });

  it("takes the limits from the top-level `reconcile` block, overridden per instance, and refuses bad ones", () => {
    const config = parseConfig(
      {
        reconcile: { concurrency: 4, ratePerSecond: 2 },
        providers: { a: { type: "generic" }, b: { type: "generic", reconcile: { concurrency: 1 } } },
      },
      {},
    );
    expect(config.reconcile).toMatchObject({ concurrency: 4, ratePerSecond: 2 });
    expect(config.providers.b?.reconcile).toEqual({ concurrency: 1 });
    expect(parseConfig({}, {}).reconcile.concurrency).toBe(10);
    expect(() => parseConfig({ reconcile: { concurrency: 0 } }, {})).toThrow("reconcile.concurrency");
    expect(() =>
      parseConfig({ providers: { a: { type: "generic", reconcile: { burst: 1.5 } } } }, {}),
    ).toThrow("providers.a.reconcile.burst");
  });
});
