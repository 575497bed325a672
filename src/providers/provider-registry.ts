import type { ProviderConfig } from "../config/config-schema.js";
import type { AdapterDeps } from "../providers/provider-adapter.js";
import { createProviderAdapter } from "../providers/provider-adapters.js";
import type { WebhookReceiver } from "./webhook-receiver.js";

/**
 * One receiver per configured provider instance, by instance name, with the signature checks in
 * `deps.verifiers`. Node-free: the Workers entry passes `webVerifiers`; Node uses
 * `createWebhookReceivers` (webhook-receivers.ts), which defaults to `nodeVerifiers`.
 */
export function webhookReceiversFromConfig(
  providers: Readonly<Record<string, ProviderConfig>>,
  deps: AdapterDeps,
): Map<string, WebhookReceiver> {
  const receivers = new Map<string, WebhookReceiver>();
  for (const [name, config] of Object.entries(providers))
    receivers.set(name, createProviderAdapter(name, config, deps).receiver);
  return receivers;
}
