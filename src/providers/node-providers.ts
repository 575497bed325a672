import type { ProviderConfig } from "../config/config-schema.js";
import { nodeVerifiers } from "../webhooks/node-verifiers.js";
import type { WebhookReceiver } from "../webhooks/receiver-types.js";
import type { WebhookVerifiers } from "../webhooks/verifier-choice.js";
import { type ProviderHealth, providerHealth } from "./provider-health.js";
import { createProviders, type ProviderRegistry } from "./provider-registry.js";

interface NodeProviderOptions {
  health?: ProviderHealth;
  verifiers?: WebhookVerifiers;
}

/**
 * The provider registry on Node: signatures are checked with node:crypto unless
 * `options.verifiers` says otherwise (the node-free builder is `createProviders`).
 */
export function createNodeProviders(
  providers: Readonly<Record<string, ProviderConfig>>,
  now: () => number,
  options: NodeProviderOptions = {},
): ProviderRegistry {
  return createProviders(
    { providers },
    { now, health: options.health ?? providerHealth, verifiers: options.verifiers ?? nodeVerifiers },
  );
}

/** One receiver per configured provider instance, by instance name, checked as `createNodeProviders` does. */
export function createWebhookReceivers(
  providers: Readonly<Record<string, ProviderConfig>>,
  now: () => number,
  options: NodeProviderOptions = {},
): Map<string, WebhookReceiver> {
  return createNodeProviders(providers, now, options).receivers;
}
