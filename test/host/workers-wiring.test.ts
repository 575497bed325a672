import { afterAll, describe, expect, it, vi } from "vitest";
import { parseConfig } from "../../src/config/parse-config.js";
import { createHttpEffectDeliverer } from "../../src/engine/http-effect-target.js";
import { createReconciler } from "../../src/engine/reconciler.js";
import { workersLedgerFromConfig } from "../../src/host/workers/ledger-from-config.js";
import { createProviderAdapter } from "../../src/providers/create-provider-adapter.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { webVerifiers } from "../../src/webhooks/web-verifiers.js";
import { tempDir } from "../helpers/temp-dir.js";
import { SECRET } from "../http/helpers/webhooks.js";

// The Workers host (what the ledger Durable Object runs) on a real SQLite store standing in for
// the object's storage: each provider's adapter is built once, with WebCrypto verifiers, and
// the reconciler polls with the adapters the receivers come from. (test/cloudflare runs it in workerd.)

vi.mock("../../src/providers/create-provider-adapter.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/providers/create-provider-adapter.js")>();
  return { ...actual, createProviderAdapter: vi.fn(actual.createProviderAdapter) };
});
vi.mock("../../src/engine/reconciler.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/engine/reconciler.js")>();
  return { ...actual, createReconciler: vi.fn(actual.createReconciler) };
});
vi.mock("../../src/engine/http-effect-target.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/engine/http-effect-target.js")>();
  return { ...actual, createHttpEffectDeliverer: vi.fn(actual.createHttpEffectDeliverer) };
});

const dir = tempDir("finality-workers-host-");
afterAll(() => dir.cleanup());

const config = (server: Record<string, unknown>) =>
  parseConfig(
    {
      server,
      providers: {
        acme: { type: "generic", webhook: { secrets: [SECRET] } },
        replicate: { type: "replicate", apiKey: "r8_wiring", webhook: { secrets: [SECRET] } },
      },
      effects: [{ name: "notify", url: "http://127.0.0.1:9/effects", secret: SECRET }],
    },
    {},
  );

describe("the Workers host", () => {
  it("builds each provider's adapter once, with WebCrypto, for the receivers and the pollers", async () => {
    const store = createSqliteStore({ path: dir.file("ledger.db") });
    const ledger = workersLedgerFromConfig(
      config({ apiToken: "wiring-api-token-0123456789" }),
      store,
      () => {},
    );
    try {
      const calls = vi.mocked(createProviderAdapter).mock.calls;
      expect(calls.map(([name]) => name)).toEqual(["acme", "replicate"]);
      for (const [, , deps] of calls) expect(deps.verifiers).toBe(webVerifiers);
      const lanes = vi.mocked(createReconciler).mock.calls[0]?.[1].providers ?? {};
      expect(vi.mocked(createReconciler)).toHaveBeenCalledTimes(1);
      const adapter = vi.mocked(createProviderAdapter).mock.results[1]?.value;
      expect(adapter.poller).not.toBeNull();
      expect(lanes.replicate?.poller).toBe(adapter.poller);
      // Effects are signed with WebCrypto (the deliverer's default), not node:crypto's signer.
      expect(vi.mocked(createHttpEffectDeliverer).mock.calls[0]?.[0]?.sign).toBeUndefined();
      expect(ledger.dispatcher).not.toBeNull();
    } finally {
      await ledger.reconciler.stop();
      await ledger.finality.close();
    }
  });

  it("refuses to start without an API token: a Worker is on the internet", () => {
    const store = createSqliteStore({ path: dir.file("refused.db") });
    try {
      expect(() => workersLedgerFromConfig(config({}), store, () => {})).toThrow(/server\.apiToken/);
    } finally {
      store.close();
    }
  });
});
