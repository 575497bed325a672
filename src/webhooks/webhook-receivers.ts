import type { ProviderConfig } from "../config/config-schema.js";
import { assertNever, FinalityError } from "../core/errors.js";
import type { Observation } from "../core/model.js";
import { parseGenericWebhook } from "./generic-webhook.js";
import {
  createStandardWebhookVerifier,
  type ReceivedWebhookHeaders,
  type VerifiedWebhook,
} from "./standard-webhooks.js";

/** Webhook intake for one provider instance: check who sent it, then turn it into an observation. */
export interface WebhookReceiver {
  readonly provider: string;
  /** Throws `signature-invalid` unless the headers sign these exact bytes. */
  verify(body: Uint8Array, headers: ReceivedWebhookHeaders): VerifiedWebhook;
  /** Throws `invalid-observation` (400) or `payload-too-large` (413) for a body it cannot use. */
  parse(body: Uint8Array, delivery: VerifiedWebhook): Observation;
}

/** One receiver per configured provider instance, by instance name. */
export function createWebhookReceivers(
  providers: Readonly<Record<string, ProviderConfig>>,
  now: () => number,
): Map<string, WebhookReceiver> {
  const receivers = new Map<string, WebhookReceiver>();
  for (const [name, config] of Object.entries(providers))
    receivers.set(name, createReceiver(name, config, now));
  return receivers;
}

function createReceiver(provider: string, config: ProviderConfig, now: () => number): WebhookReceiver {
  const verifier =
    config.webhook === undefined
      ? null
      : createStandardWebhookVerifier({
          secrets: config.webhook.secrets,
          toleranceSeconds: config.webhook.toleranceSeconds,
          now,
        });
  const type = config.type;
  switch (type) {
    case "generic":
      return {
        provider,
        verify(body, headers) {
          // Without a secret nothing can prove who sent a webhook: refuse every one.
          if (verifier === null) {
            throw new FinalityError(
              "signature-invalid",
              `provider "${provider}" has no webhook secret configured`,
              {
                details: { reason: "no-matching-signature", provider },
              },
            );
          }
          return verifier.verify(body, headers);
        },
        parse: (body, delivery) => parseGenericWebhook(body, provider, delivery.id),
      };
    default:
      return assertNever(type, "provider type");
  }
}
