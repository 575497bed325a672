import { FinalityError } from "../core/errors.js";
import { createHmacHeaderVerifier } from "./hmac-signature.js";
import { createStandardWebhookVerifier } from "./standard-webhooks.js";
import { createStripeSignatureVerifier } from "./stripe-signature.js";
import type { WebhookVerifier } from "./webhook-receiver.js";

/** A provider instance's `webhook` settings, as far as signature checking goes. */
export interface WebhookSignatureConfig {
  secrets?: readonly string[] | undefined;
  toleranceSeconds?: number | undefined;
  /** Generic providers only; the named providers all sign with Standard Webhooks. */
  scheme?: "standard-webhooks" | "hmac-sha256" | "stripe" | undefined;
  header?: string | undefined;
  encoding?: "hex" | "base64" | undefined;
  prefix?: string | undefined;
  idHeader?: string | undefined;
}

/**
 * The verifier a provider's configuration asks for. Without a secret nothing can prove who sent
 * a webhook, so every one is refused.
 */
export function createWebhookVerifier(
  provider: string,
  config: WebhookSignatureConfig | undefined,
  now: () => number,
): WebhookVerifier {
  const secrets = config?.secrets ?? [];
  if (config === undefined || secrets.length === 0) return refuseAll(provider);
  const scheme = config.scheme ?? "standard-webhooks";
  switch (scheme) {
    case "standard-webhooks": {
      const verifier = createStandardWebhookVerifier({
        secrets,
        toleranceSeconds: config.toleranceSeconds,
        now,
      });
      return (body, headers) => verifier.verify(body, headers);
    }
    case "hmac-sha256":
      return createHmacHeaderVerifier({
        secrets,
        header: config.header ?? "x-signature",
        encoding: config.encoding ?? "hex",
        prefix: config.prefix ?? "",
        idHeader: config.idHeader,
        now,
      });
    case "stripe":
      return createStripeSignatureVerifier({
        secrets,
        header: config.header,
        toleranceSeconds: config.toleranceSeconds,
        idHeader: config.idHeader,
        now,
      });
  }
}

export function refuseAll(provider: string): WebhookVerifier {
  return () => {
    throw new FinalityError("signature-invalid", `provider "${provider}" has no webhook secret configured`, {
      details: { reason: "no-matching-signature", provider },
    });
  };
}
