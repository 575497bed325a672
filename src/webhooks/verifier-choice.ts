import { assertNever, FinalityError } from "../core/errors.js";
import type { SignatureHeaderCheck, WebhookVerifier } from "./receiver-types.js";
import { type HmacHeaderVerifierOptions, readHmacSignatureHeader } from "./schemes/hmac/header.js";
import {
  readStandardWebhook,
  type StandardWebhookVerifierOptions,
} from "./schemes/standard-webhooks/header.js";
import { readStripeSignatureHeader, type StripeSignatureVerifierOptions } from "./schemes/stripe/header.js";
import { DEFAULT_TOLERANCE_SECONDS } from "./signature-common.js";

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
 * Where adapters get their signature checks. Injected (AdapterDeps) rather than imported so that
 * an adapter runs on Workers: Node passes `nodeVerifiers` (node-verifiers.ts, synchronous
 * node:crypto, the fast path) and the Workers entry `webVerifiers` (web-verifiers.ts, WebCrypto).
 */
export interface WebhookVerifiers {
  /** The verifier a provider's configuration asks for; without a secret, one that refuses all. */
  webhook(provider: string, config: WebhookSignatureConfig | undefined, now: () => number): WebhookVerifier;
}

/** One verifier per scheme: the part that differs between node:crypto and WebCrypto. */
interface SchemeVerifiers {
  standardWebhooks(options: StandardWebhookVerifierOptions): WebhookVerifier;
  hmacHeader(options: HmacHeaderVerifierOptions): WebhookVerifier;
  stripe(options: StripeSignatureVerifierOptions): WebhookVerifier;
}

/** The configuration's choice of scheme and its defaults, shared by both implementations. */
export function webhookVerifiersFrom(schemes: SchemeVerifiers): WebhookVerifiers {
  return {
    webhook(provider, config, now) {
      const secrets = config?.secrets ?? [];
      // Without a secret nothing can prove who sent a webhook, so every one is refused.
      if (config === undefined || secrets.length === 0) return refuseAll(provider);
      const scheme = config.scheme ?? "standard-webhooks";
      switch (scheme) {
        case "standard-webhooks":
          return schemes.standardWebhooks({ secrets, toleranceSeconds: config.toleranceSeconds, now });
        case "hmac-sha256":
          return schemes.hmacHeader({
            secrets,
            header: config.header ?? "x-signature",
            encoding: config.encoding ?? "hex",
            prefix: config.prefix ?? "",
            idHeader: config.idHeader,
            now,
          });
        case "stripe":
          return schemes.stripe({
            secrets,
            header: config.header,
            toleranceSeconds: config.toleranceSeconds,
            idHeader: config.idHeader,
            now,
          });
        default:
          return assertNever(scheme, "webhook signature scheme");
      }
    },
  };
}

/**
 * The headers half of the configured scheme, on both runtimes alike (no cryptography): throws
 * `signature-invalid` when the headers the scheme signs with are missing (or, for schemes with
 * a timestamp, stale), so that such a request is refused before its body is read.
 */
export function signatureHeaderCheck(
  provider: string,
  config: WebhookSignatureConfig | undefined,
  now: () => number,
): SignatureHeaderCheck {
  const secrets = config?.secrets ?? [];
  if (config === undefined || secrets.length === 0) {
    const refuse = refuseAll(provider);
    return (headers) => void refuse(new Uint8Array(0), headers);
  }
  const scheme = config.scheme ?? "standard-webhooks";
  switch (scheme) {
    case "standard-webhooks": {
      const tolerance = config.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
      return (headers) => void readStandardWebhook(headers, tolerance, now);
    }
    case "hmac-sha256": {
      const options = {
        header: config.header ?? "x-signature",
        encoding: config.encoding ?? "hex",
        prefix: config.prefix ?? "",
      };
      return (headers) => void readHmacSignatureHeader(headers, options);
    }
    case "stripe": {
      const options = { header: config.header, toleranceSeconds: config.toleranceSeconds, now };
      return (headers) => void readStripeSignatureHeader(headers, options);
    }
    default:
      return assertNever(scheme, "webhook signature scheme");
  }
}

export function refuseAll(provider: string): WebhookVerifier {
  return () => {
    throw new FinalityError("signature-invalid", `provider "${provider}" has no webhook secret configured`, {
      details: { reason: "no-matching-signature", provider },
    });
  };
}
