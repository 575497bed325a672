// `finality/webhooks`: the signature schemes and the receivers of configured providers, for those
// who only take webhooks (all of it is in `finality` too).
export {
  createProviders,
  type ProviderPolling,
  type ProviderRegistry,
  webhookReceiversFromConfig,
} from "../providers/provider-registry.js";
export { createNodeProviders, createWebhookReceivers } from "../providers/webhook-receivers.js";
export { createHmacHeaderVerifier } from "../webhooks/hmac-signature.js";
export { createJwtVerifier } from "../webhooks/jwt-signature.js";
export {
  createStandardWebhookVerifier,
  type ReceivedWebhookHeaders,
  signStandardWebhook,
  type VerifiedWebhook,
} from "../webhooks/standard-webhooks.js";
export { createStripeSignatureVerifier } from "../webhooks/stripe-signature.js";
export type { WebhookSignatureConfig, WebhookVerifiers } from "../webhooks/verifiers.js";
export { signStandardWebhookWeb, webVerifiers } from "../webhooks/web-verifiers.js";
export type { WebhookParseContext, WebhookReceiver } from "../webhooks/webhook-receiver.js";
export { createWebhookVerifier, nodeVerifiers } from "../webhooks/webhook-verifier.js";
