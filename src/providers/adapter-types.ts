import type { Poller } from "../engine/poller.js";
import type { WebhookReceiver } from "../webhooks/receiver-types.js";
import type { WebhookVerifiers } from "../webhooks/verifier-choice.js";
import type { JobLister } from "./discovery-types.js";
import type { ProviderHealth } from "./provider-health.js";

/** One configured provider instance, as the service uses it. */
export interface ProviderAdapter {
  /** Verifies and parses this provider's webhooks. */
  receiver: WebhookReceiver;
  /** Asks the provider for one job's state; null when it cannot be polled (no URL or no key). */
  poller: Poller | null;
  /** Time allowed for one poll, from the configuration. */
  pollTimeoutMs?: number | undefined;
  /** Reads the provider's list API for discovery sweeps; absent when it has none. */
  lister?: JobLister | undefined;
}

/** What every adapter factory is given besides its own configuration. */
export interface AdapterDeps {
  /** Epoch milliseconds; webhook timestamps and JWT lifetimes are checked against it. */
  now: () => number;
  health: ProviderHealth;
  /**
   * Signature checks: `nodeVerifiers` (node:crypto) on Node, `webVerifiers` (WebCrypto) on Workers.
   * Injected so that no adapter imports node:crypto.
   */
  verifiers: WebhookVerifiers;
}
