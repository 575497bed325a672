import type { ProviderConfig } from "../config/config-schema.js";
import { type ProviderHealth, providerHealth } from "../providers/provider-health.js";
import { webhookReceiversFromConfig } from "./receivers-from-config.js";
import type { WebhookVerifiers } from "./verifiers.js";
import type { WebhookReceiver } from "./webhook-receiver.js";
import { nodeVerifiers } from "./webhook-verifier.js";

export type { WebhookParseContext, WebhookReceiver } from "./webhook-receiver.js";

/**
 * One receiver per configured provider instance, by instance name. Node's entry point: signatures
 * are checked with node:crypto unless `options.verifiers` says otherwise (the node-free builder
 * is `webhookReceiversFromConfig`).
 */
export function createWebhookReceivers(
  providers: Readonly<Record<string, ProviderConfig>>,
  now: () => number,
  options: { health?: ProviderHealth; verifiers?: WebhookVerifiers } = {},
): Map<string, WebhookReceiver> {
  return webhookReceiversFromConfig(providers, {
    now,
    health: options.health ?? providerHealth,
    verifiers: options.verifiers ?? nodeVerifiers,
  });
}
