import { type WebhookVerifiers, webhookVerifiersFrom } from "./verifiers.js";
import { createWebHmacHeaderVerifier } from "./web-hmac-signature.js";
import { createWebStandardWebhookVerifier } from "./web-standard-webhooks.js";
import { createWebStripeSignatureVerifier } from "./web-stripe-signature.js";

/**
 * Signature checks with WebCrypto (`crypto.subtle`), for runtimes without node:crypto such as
 * Cloudflare Workers. Accepts and refuses exactly what `nodeVerifiers` does, with the same errors
 * (test/webhooks-web proves it), but every check is a promise: on Node, prefer `nodeVerifiers`.
 */
export const webVerifiers: WebhookVerifiers = webhookVerifiersFrom({
  standardWebhooks: createWebStandardWebhookVerifier,
  hmacHeader: createWebHmacHeaderVerifier,
  stripe: createWebStripeSignatureVerifier,
});

export { signStandardWebhookWeb } from "./web-standard-webhooks.js";
