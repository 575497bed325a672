// `finality/webhooks`: the signature schemes and the receivers of configured providers, for those
// who only take webhooks (all of it is in `finality` too).

export { createNodeProviders, createWebhookReceivers } from "../providers/node-providers.js";
export {
  createProviders,
  type ProviderPolling,
  type ProviderRegistry,
  webhookReceiversFromConfig,
} from "../providers/provider-registry.js";
export { createJwtVerifier } from "../webhooks/jwt-signature.js";
export { createWebhookVerifier, nodeVerifiers } from "../webhooks/node-verifiers.js";
export type { WebhookParseContext, WebhookReceiver } from "../webhooks/receiver-types.js";
export { createHmacHeaderVerifier } from "../webhooks/schemes/hmac/node.js";
export {
  createStandardWebhookVerifier,
  type ReceivedWebhookHeaders,
  signStandardWebhook,
  type VerifiedWebhook,
} from "../webhooks/schemes/standard-webhooks/node.js";
export { createStripeSignatureVerifier } from "../webhooks/schemes/stripe/node.js";
export type { WebhookSignatureConfig, WebhookVerifiers } from "../webhooks/verifier-choice.js";
export { signStandardWebhookWeb, webVerifiers } from "../webhooks/web-verifiers.js";
