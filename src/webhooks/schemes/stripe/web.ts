import { hexBytes } from "../../byte-encoding.js";
import { signatureError, type WebWebhookVerifier } from "../../signature-common.js";
import {
  anyVerified,
  HMAC_SHA256_BYTES,
  signedContent,
  utf8HmacKey,
  verifyHmac,
} from "../../web-crypto-keys.js";
import { webDeliveryIdOf } from "../hmac/web.js";
import { readStripeSignatureHeader, type StripeSignatureVerifierOptions } from "./header.js";

/** Stripe's scheme with WebCrypto; same results and refusals as node.ts. */

export function createWebStripeSignatureVerifier(
  options: StripeSignatureVerifierOptions,
): WebWebhookVerifier {
  return async (body, headers) => {
    const message = readStripeSignatureHeader(headers, options);
    const content = signedContent(message.signedPrefix, body);
    const signatures = message.signatures
      .map((text) => hexBytes(text, HMAC_SHA256_BYTES))
      .filter((bytes) => bytes !== null);
    const checks: Promise<boolean>[] = [];
    for (const secret of options.secrets) {
      const key = utf8HmacKey(secret);
      for (const signature of signatures) checks.push(verifyHmac(key, signature, content));
    }
    if (!(await anyVerified(checks))) throw signatureError("no-matching-signature");
    return {
      id: await webDeliveryIdOf(body, headers, options.idHeader),
      timestampSeconds: message.timestampSeconds,
    };
  };
}
