import type { ProviderConfig } from "../config/config-schema.js";
import type { Poller } from "../engine/poller.js";
import type { WebhookReceiver } from "../webhooks/receiver-types.js";
import type { AdapterDeps, ProviderAdapter } from "./adapter-types.js";
import { createProviderAdapter } from "./create-provider-adapter.js";
import type { ProviderHealth } from "./provider-health.js";

/** A provider instance's poller as the reconciler takes it. */
export interface ProviderPolling {
  poller: Poller | null;
  timeoutMs?: number | undefined;
}

/**
 * The configured provider instances, each adapter built once: the webhook intake takes the
 * receivers, the reconciler the pollers, and both see the same `health` (a key the poller found
 * refused is the one the receiver's notify-then-fetch uses). Node-free: a host passes the
 * signature checks (`nodeVerifiers` on Node, `webVerifiers` on Workers) in `deps`.
 */
export interface ProviderRegistry {
  readonly adapters: ReadonlyMap<string, ProviderAdapter>;
  /** One receiver per instance, by instance name. */
  readonly receivers: Map<string, WebhookReceiver>;
  /** One poller per instance, by instance name (null: it cannot be polled). */
  readonly pollers: ReadonlyMap<string, ProviderPolling>;
  readonly health: ProviderHealth;
}

export function createProviders(
  config: { readonly providers: Readonly<Record<string, ProviderConfig>> },
  deps: AdapterDeps,
): ProviderRegistry {
  const adapters = new Map<string, ProviderAdapter>();
  const receivers = new Map<string, WebhookReceiver>();
  const pollers = new Map<string, ProviderPolling>();
  for (const [name, provider] of Object.entries(config.providers)) {
    const adapter = createProviderAdapter(name, provider, deps);
    adapters.set(name, adapter);
    receivers.set(name, adapter.receiver);
    pollers.set(name, { poller: adapter.poller, timeoutMs: adapter.pollTimeoutMs });
  }
  return { adapters, receivers, pollers, health: deps.health };
}

/**
 * One receiver per configured provider instance, by instance name (the library's entry for those
 * who only take webhooks; a host uses `createProviders`).
 */
export function webhookReceiversFromConfig(
  providers: Readonly<Record<string, ProviderConfig>>,
  deps: AdapterDeps,
): Map<string, WebhookReceiver> {
  return createProviders({ providers }, deps).receivers;
}
