import { canonicalBase64Bytes, hexBytes } from "../../byte-encoding.js";
import {
  nowSeconds,
  type ReceivedWebhookHeaders,
  sentDeliveryId,
  signatureError,
  type WebWebhookVerifier,
} from "../../signature-common.js";
import { anyVerified, HMAC_SHA256_BYTES, sha256Hex, utf8HmacKey, verifyHmac } from "../../web-crypto-keys.js";
import { type HmacHeaderVerifierOptions, readHmacSignatureHeader } from "./header.js";

/** The HMAC header scheme with WebCrypto; same results and refusals as node.ts. */

export function createWebHmacHeaderVerifier(options: HmacHeaderVerifierOptions): WebWebhookVerifier {
  return async (body, headers) => {
    const text = readHmacSignatureHeader(headers, options);
    const signature = digestBytes(text, options.encoding);
    const checks =
      signature === null
        ? []
        : options.secrets.map((secret) => verifyHmac(utf8HmacKey(secret), signature, body));
    if (!(await anyVerified(checks))) throw signatureError("no-matching-signature");
    return {
      id: await webDeliveryIdOf(body, headers, options.idHeader),
      timestampSeconds: nowSeconds(options.now),
    };
  };
}

/** Node compares digest text: only the exact text node writes can match (else null). */
function digestBytes(text: string, encoding: "hex" | "base64"): Uint8Array | null {
  return encoding === "hex"
    ? hexBytes(text, HMAC_SHA256_BYTES)
    : canonicalBase64Bytes(text, HMAC_SHA256_BYTES);
}

/** As `deliveryIdOf`: the sender's delivery id when it sends one, else `sha256:<hex of the body>`. */
export async function webDeliveryIdOf(
  body: Uint8Array,
  headers: ReceivedWebhookHeaders,
  idHeader: string | undefined,
): Promise<string> {
  return sentDeliveryId(headers, idHeader) ?? `sha256:${await sha256Hex(body)}`;
}
