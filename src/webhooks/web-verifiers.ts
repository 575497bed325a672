import { createWebHmacHeaderVerifier } from "./schemes/hmac/web.js";
import { createWebStandardWebhookVerifier } from "./schemes/standard-webhooks/web.js";
import { createWebStripeSignatureVerifier } from "./schemes/stripe/web.js";
import { type WebhookVerifiers, webhookVerifiersFrom } from "./verifier-choice.js";

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

export { signStandardWebhookWeb } from "./schemes/standard-webhooks/web.js";
