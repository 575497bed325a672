import type { WebhookVerifier } from "./receiver-types.js";
import { createHmacHeaderVerifier } from "./schemes/hmac/node.js";
import { createStandardWebhookVerifier } from "./schemes/standard-webhooks/node.js";
import { createStripeSignatureVerifier } from "./schemes/stripe/node.js";
import {
  type WebhookSignatureConfig,
  type WebhookVerifiers,
  webhookVerifiersFrom,
} from "./verifier-choice.js";

/** Signature checks with synchronous node:crypto: the Node service's fast path. */
export const nodeVerifiers: WebhookVerifiers = webhookVerifiersFrom({
  standardWebhooks(options) {
    const verifier = createStandardWebhookVerifier(options);
    return (body, headers) => verifier.verify(body, headers);
  },
  hmacHeader: createHmacHeaderVerifier,
  stripe: createStripeSignatureVerifier,
});

/**
 * The verifier a provider's configuration asks for, on Node. Without a secret nothing can prove
 * who sent a webhook, so every one is refused.
 */
export function createWebhookVerifier(
  provider: string,
  config: WebhookSignatureConfig | undefined,
  now: () => number,
): WebhookVerifier {
  return nodeVerifiers.webhook(provider, config, now);
}
