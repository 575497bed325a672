import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { parseConfig } from "../../src/config/parse-config.js";
import { manualClock } from "../../src/core/clock.js";
import { createFinality } from "../../src/engine/create-finality.js";
import type { Finality } from "../../src/engine/finality.js";
import { ledgerOptionsFromConfig } from "../../src/host/from-config.js";
import { type BackgroundLoop, createBackgroundLoops } from "../../src/host/node/background-loop.js";
import type { Logger } from "../../src/http/request-log.js";
import { createNodeProviders } from "../../src/providers/node-providers.js";
import { signStandardWebhook } from "../../src/webhooks/schemes/standard-webhooks/node.js";
import { signStandardWebhookWeb } from "../../src/webhooks/schemes/standard-webhooks/web.js";
import { engineOf } from "../helpers/engine.js";
import { EffectReceiver } from "../helpers/receiver.js";
import { tempDir } from "../helpers/temp-dir.js";
import { SECRET } from "../http/helpers/webhooks.js";

// The signers and the Node transport, wrapped so the test sees which ones `serve` uses; they
// still sign and send for real (the receiver checks every signature).
vi.mock("../../src/webhooks/schemes/standard-webhooks/node.js", async (importOriginal) => {
  const actual =
    await importOriginal<typeof import("../../src/webhooks/schemes/standard-webhooks/node.js")>();
  return { ...actual, signStandardWebhook: vi.fn(actual.signStandardWebhook) };
});
vi.mock("../../src/webhooks/schemes/standard-webhooks/web.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/webhooks/schemes/standard-webhooks/web.js")>();
  return { ...actual, signStandardWebhookWeb: vi.fn(actual.signStandardWebhookWeb) };
});
const transportCalls = vi.hoisted(() => ({ count: 0 }));
vi.mock("../../src/engine/node-http-transport.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/engine/node-http-transport.js")>();
  return {
    createNodeHttpTransport: (options?: Parameters<typeof actual.createNodeHttpTransport>[0]) => {
      const transport = actual.createNodeHttpTransport(options);
      return (...args: Parameters<typeof transport>) => {
        transportCalls.count++;
        return transport(...args);
      };
    },
  };
});

interface Warned {
  effect: string;
  outcome: string;
  error?: string;
}

/**
 * `finality serve`'s background loops (host/node/background-loop.ts → host/from-config.ts → the
 * dispatcher) on a ledger built from `effectDelivery`, with a manual clock; `warned` collects the
 * "effect not delivered" log lines, `until` waits for one.
 */
function serveLoops(effectDelivery: Record<string, unknown>) {
  const dir = tempDir();
  const config = parseConfig(
    {
      providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } },
      effects: [{ name: "notify", url: receiver.url, secret: SECRET }],
      effectDelivery: { pollIntervalSeconds: 0.02, ...effectDelivery },
    },
    {},
  );
  // Starts now: the receiver checks the signature's timestamp against its own clock.
  const clock = manualClock(Date.now());
  const finality = createFinality({
    store: { sqlite: dir.file("ledger.db") },
    clock,
    ...ledgerOptionsFromConfig(config),
  });
  const warned: Warned[] = [];
  let wake = () => {};
  const logger: Logger = {
    info() {},
    error() {},
    warn(fields, message) {
      if (message === "effect not delivered") warned.push(fields as Warned);
      wake();
    },
  };
  const providers = createNodeProviders(config.providers, () => engineOf(finality).clock.now());
  const loops = createBackgroundLoops({ finality, config, logger, providers });
  const dispatcher = loops.find((loop) => loop.name === "dispatcher") as BackgroundLoop;
  dispatcher.start();
  opened.push({ finality, dispatcher, dir });
  const until = (predicate: () => boolean) =>
    new Promise<void>((resolve) => {
      const check = () => (predicate() ? resolve() : undefined);
      wake = check;
      check();
    });
  return { finality, clock, warned, until };
}

async function settle(finality: Finality, id: string): Promise<void> {
  await finality.ingest({
    provider: "acme",
    id,
    state: "succeeded",
    source: "webhook",
    deliveryId: `d-${id}`,
  });
}

const receiver = new EffectReceiver(SECRET);
const opened: { finality: Finality; dispatcher: BackgroundLoop; dir: { cleanup(): void } }[] = [];
beforeAll(() => receiver.listen());
afterAll(() => receiver.close());
afterEach(async () => {
  for (const { finality, dispatcher, dir } of opened.splice(0)) {
    await dispatcher.stop();
    await finality.close();
    dir.cleanup();
  }
  for (const res of receiver.held.splice(0)) res.destroy();
  receiver.deliveries.length = 0;
  receiver.applied.clear();
  vi.mocked(signStandardWebhook).mockClear();
  vi.mocked(signStandardWebhookWeb).mockClear();
  transportCalls.count = 0;
});

describe("`finality serve` delivers effects as effectDelivery says", () => {
  it("signs with node:crypto (not WebCrypto) and sends over node:http", async () => {
    receiver.decide = () => 204;
    const { finality } = serveLoops({});
    await settle(finality, "j1");
    await receiver.until(() => receiver.applied.size === 1);
    expect(vi.mocked(signStandardWebhook)).toHaveBeenCalledTimes(1);
    expect(vi.mocked(signStandardWebhookWeb)).not.toHaveBeenCalled();
    expect(transportCalls.count).toBe(1);
  });

  it("takes the effects its ingests enqueue from their transactions while it runs (the handoff)", async () => {
    receiver.decide = () => 204;
    const { finality } = serveLoops({});
    const stranger = { leaseMsForNext: () => null, enqueuedPending() {}, take() {} };
    // Held by serve's dispatcher: no other may take it.
    expect(engineOf(finality).takeEffectHandoff(stranger)).toBe(false);
    await settle(finality, "j0");
    await receiver.until(() => receiver.applied.size === 1);
    // Stopping waits for the delivery to be recorded, and gives the handoff up.
    const { dispatcher } = opened.at(-1) as (typeof opened)[number];
    await dispatcher.stop();
    const [row] = (await engineOf(finality).store.listEffects({ jobId: "j0" })).items;
    expect({ status: row?.status, attempts: row?.attempts }).toEqual({ status: "delivered", attempts: 1 });
    expect(engineOf(finality).takeEffectHandoff(stranger)).toBe(true);
  });

  it("claims under leaseSeconds and gives up on a silent receiver after timeoutSeconds", async () => {
    receiver.decide = () => "hold";
    const { finality, clock, warned, until } = serveLoops({
      timeoutSeconds: 0.4,
      leaseSeconds: 7,
      maxAttempts: 1,
    });
    const claimedAt = clock.now();
    await settle(finality, "j2");
    await receiver.until(() => receiver.held.length === 1);
    const started = performance.now();
    const [held] = (await engineOf(finality).store.listEffects({ jobId: "j2" })).items;
    // 7 s, not the default (timeout × 4 = 1.6 s); the clock stands still, so renewals keep it.
    expect(held).toMatchObject({ status: "delivering", leaseUntil: claimedAt + 7_000 });
    await until(() => warned.length === 1);
    const waited = performance.now() - started;
    expect(warned[0]).toMatchObject({
      effect: "notify",
      outcome: "dead",
      error: `POST ${new URL(receiver.url).origin} failed: delivery timed out`,
    });
    // The default timeout is 15 s: this one ended after about 0.4 s.
    expect(waited).toBeLessThan(5_000);
  });

  it("retries on retrySeconds and stops at maxAttempts", async () => {
    receiver.decide = () => 503;
    const { finality, clock, warned, until } = serveLoops({ retrySeconds: [40, 50], maxAttempts: 2 });
    await settle(finality, "j3");
    await until(() => warned.length === 1);
    const [first] = (await engineOf(finality).store.listEffects({ jobId: "j3" })).items;
    expect(warned[0]?.outcome).toBe("retry");
    // 40 s ± 20 % jitter (the default first step is 5 s).
    const delay = (first?.nextAttemptAt ?? 0) - clock.now();
    expect(delay).toBeGreaterThanOrEqual(32_000);
    expect(delay).toBeLessThanOrEqual(48_000);
    clock.set(first?.nextAttemptAt ?? 0);
    await until(() => warned.length === 2);
    // The default has no attempt limit: it would retry again.
    expect(warned[1]?.outcome).toBe("dead");
    expect(receiver.deliveries).toHaveLength(2);
  });

  it("gives up once an effect is older than maxAgeSeconds", async () => {
    receiver.decide = () => 503;
    const { finality, warned, until } = serveLoops({ retrySeconds: [40], maxAgeSeconds: 30 });
    await settle(finality, "j4");
    await until(() => warned.length === 1);
    // Its next try (in 32–48 s) would be past 30 s of age; the default age limit is 3 days.
    expect(warned[0]?.outcome).toBe("dead");
  });
});
