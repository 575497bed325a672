import { canonicalBase64Bytes, encodeBase64 } from "../../byte-encoding.js";
import {
  DEFAULT_TOLERANCE_SECONDS,
  signatureError,
  type WebWebhookVerifier,
} from "../../signature-common.js";
import {
  anyVerified,
  ed25519Key,
  HMAC_SHA256_BYTES,
  signedContent,
  signHmac,
  standardHmacKey,
  verifyEd25519,
  verifyHmac,
} from "../../web-crypto-keys.js";
import {
  ed25519SignaturesOf,
  hmacSignaturesOf,
  readStandardWebhook,
  type SignInput,
  type StandardWebhookHeaders,
  type StandardWebhookVerifierOptions,
  signedHeaders,
  signingPrefixOf,
  splitStandardSecrets,
} from "./header.js";

/**
 * Standard Webhooks with WebCrypto, for runtimes without node:crypto (Workers). Same headers,
 * secrets, refusals and results as node.ts: only the cryptography differs.
 */

/** Signs one message as `signStandardWebhook` does, byte for byte; returns the headers to send. */
export async function signStandardWebhookWeb(input: SignInput): Promise<StandardWebhookHeaders> {
  const content = signedContent(signingPrefixOf(input), input.body);
  return signedHeaders(input, encodeBase64(await signHmac(standardHmacKey(input.secret), content)));
}

export function createWebStandardWebhookVerifier(
  options: StandardWebhookVerifierOptions,
): WebWebhookVerifier {
  const secrets = splitStandardSecrets(options.secrets);
  const toleranceSeconds = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  return async (body, headers) => {
    const message = readStandardWebhook(headers, toleranceSeconds, options.now);
    const content = signedContent(message.signedPrefix, body);
    const checks: Promise<boolean>[] = [];
    // Node compares base64 text: a signature spelled any other way than node writes it cannot match.
    const hmacSignatures = hmacSignaturesOf(message.signatures)
      .map((text) => canonicalBase64Bytes(text, HMAC_SHA256_BYTES))
      .filter((bytes) => bytes !== null);
    for (const secret of secrets.hmac) {
      const key = standardHmacKey(secret);
      for (const signature of hmacSignatures) checks.push(verifyHmac(key, signature, content));
    }
    if (secrets.ed25519.length > 0) {
      const ed25519Signatures = ed25519SignaturesOf(message.signatures);
      for (const secret of secrets.ed25519) {
        const key = ed25519Key(secret);
        for (const signature of ed25519Signatures) checks.push(verifyEd25519(key, signature, content));
      }
    }
    if (await anyVerified(checks)) return { id: message.id, timestampSeconds: message.timestampSeconds };
    throw signatureError("no-matching-signature");
  };
}
