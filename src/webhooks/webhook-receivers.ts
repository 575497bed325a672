import type { ProviderConfig } from "../config/config-schema.js";
import { createProviderAdapter } from "../providers/provider-adapters.js";
import { type ProviderHealth, providerHealth } from "../providers/provider-health.js";
import type { WebhookReceiver } from "./webhook-receiver.js";

export type { WebhookParseContext, WebhookReceiver } from "./webhook-receiver.js";

/** One receiver per configured provider instance, by instance name. */
export function createWebhookReceivers(
  providers: Readonly<Record<string, ProviderConfig>>,
  now: () => number,
  options: { health?: ProviderHealth } = {},
): Map<string, WebhookReceiver> {
  const deps = { now, health: options.health ?? providerHealth };
  const receivers = new Map<string, WebhookReceiver>();
  for (const [name, config] of Object.entries(providers))
    receivers.set(name, createProviderAdapter(name, config, deps).receiver);
  return receivers;
}
