import type { Reconciler } from "../../../src/engine/reconciler.js";
import { reconcilerFromConfig } from "../../../src/host/from-config.js";
import type { Logger } from "../../../src/http/request-log.js";
import { createNodeProviders } from "../../../src/providers/node-providers.js";
import { createProviderHealth, type ProviderHealth } from "../../../src/providers/provider-health.js";
import type { SignedDelivery } from "../../fakes/webhook-delivery.js";
import { engineOf } from "../../helpers/engine.js";
import { type InProcess, inProcessApp } from "../../http/helpers/in-process.js";

export interface ProviderApp extends InProcess {
  reconciler: Reconciler;
  health: ProviderHealth;
  logs: { level: string; fields: object; message?: string | undefined }[];
  /** POSTs a signed delivery to /webhooks/{provider} through app.request (no port). */
  post(
    provider: string,
    delivery: SignedDelivery,
  ): Promise<{ status: number; body: Record<string, unknown> }>;
  register(provider: string, id: string, extra?: Record<string, unknown>): Promise<void>;
  job(provider: string, id: string): Promise<Record<string, unknown>>;
}

/**
 * The service's app on an in-memory ledger, with one configured provider instance per entry and
 * the reconciler the configuration describes. Grace 0 so that a registered job is due at once.
 */
export async function providerApp(
  providers: Record<string, Record<string, unknown>>,
  /** More of the configuration (e.g. `server`), beside the providers. */
  more: Record<string, unknown> = {},
): Promise<ProviderApp> {
  const app = await inProcessApp({ ...more, providers, reconcile: { graceSeconds: 0 } });
  const logs: ProviderApp["logs"] = [];
  const logger: Logger = {
    info: (fields, message) => logs.push({ level: "info", fields, message }),
    warn: (fields, message) => logs.push({ level: "warn", fields, message }),
    error: (fields, message) => logs.push({ level: "error", fields, message }),
  };
  const health = createProviderHealth();
  const reconciler = reconcilerFromConfig(app.finality, app.config, {
    logger,
    providers: createNodeProviders(app.config.providers, () => engineOf(app.finality).clock.now(), {
      health,
    }),
  });
  return {
    ...app,
    reconciler,
    health,
    logs,
    async post(provider, delivery) {
      const response = await app.app.request(`/webhooks/${provider}`, {
        method: "POST",
        headers: delivery.headers,
        body: delivery.body,
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    },
    async register(provider, id, extra = {}) {
      const response = await app.app.request("/v1/jobs", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ provider, id, ...extra }),
      });
      if (response.status >= 300)
        throw new Error(`register answered ${response.status}: ${await response.text()}`);
    },
    async job(provider, id) {
      const response = await app.app.request(`/v1/jobs/${provider}/${encodeURIComponent(id)}`);
      return (await response.json()) as Record<string, unknown>;
    },
    async close() {
      await reconciler.stop();
      await app.close();
    },
  };
}
