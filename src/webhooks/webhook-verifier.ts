import { createHmacHeaderVerifier } from "./hmac-signature.js";
import { createStandardWebhookVerifier } from "./standard-webhooks.js";
import { createStripeSignatureVerifier } from "./stripe-signature.js";
import { type WebhookSignatureConfig, type WebhookVerifiers, webhookVerifiersFrom } from "./verifiers.js";
import type { WebhookVerifier } from "./webhook-receiver.js";

export { refuseAll, type WebhookSignatureConfig, type WebhookVerifiers } from "./verifiers.js";

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
