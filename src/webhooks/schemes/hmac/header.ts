import { type ReceivedWebhookHeaders, signatureError } from "../../signature-common.js";

/**
 * Plain HMAC-SHA256 of the raw body in one named header, hex or base64, with an optional prefix:
 * GitHub's `X-Hub-Signature-256: sha256=<hex>` (https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries),
 * Shopify's `X-Shopify-Hmac-Sha256: <base64>`, and most home-grown senders.
 *
 * The scheme signs no timestamp, so a captured delivery can be replayed: it is only ever the same
 * observation again, and the delivery id (a header such as `X-GitHub-Delivery`, else the body's
 * hash) makes the ledger record a replay as a duplicate.
 */
export interface HmacHeaderVerifierOptions {
  /** Secrets used as their UTF-8 bytes, as GitHub and Shopify do (several during a rotation). */
  secrets: readonly string[];
  /** Lower-case header name, e.g. `x-hub-signature-256`. */
  header: string;
  encoding: "hex" | "base64";
  /** Text before the digest, e.g. `sha256=`; empty for none. */
  prefix: string;
  /** Header carrying the sender's delivery id; absent: `sha256:<hex of the body>`. */
  idHeader?: string | undefined;
  now: () => number;
}

/**
 * The digest text the sender put in the header (hex lower-cased, as node:crypto writes it);
 * throws `signature-invalid` when the header is missing or lacks the prefix.
 */
export function readHmacSignatureHeader(
  headers: ReceivedWebhookHeaders,
  options: Pick<HmacHeaderVerifierOptions, "header" | "encoding" | "prefix">,
): string {
  const value = headers.get?.(options.header)?.trim();
  if (!value) throw signatureError("missing-headers", `the ${options.header} header is required`);
  if (!value.startsWith(options.prefix))
    throw signatureError("no-matching-signature", `${options.header} must start with "${options.prefix}"`);
  const digest = value.slice(options.prefix.length);
  return options.encoding === "hex" ? digest.toLowerCase() : digest;
}
