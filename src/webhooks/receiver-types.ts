import type { Job, JobKey, Observation } from "../core/model.js";
import type { ReceivedWebhookHeaders, VerifiedWebhook } from "./signature-common.js";

/** What a parser may consult besides the body: the ledger's record of a job (read-only). */
export interface WebhookParseContext {
  getJob(key: JobKey): Promise<Job | null>;
  /**
   * True when this delivery is already recorded: a thin webhook's redelivery then skips the
   * provider fetch (it is a duplicate whatever the object says now).
   */
  deliveryRecorded?(provider: string, deliveryId: string): Promise<boolean>;
}

/**
 * Webhook intake for one provider instance: check who sent it, then turn it into an observation.
 *
 * Both steps may answer synchronously or with a promise. On Node (`nodeVerifiers`) the generic
 * receiver answers at once, so the hot path pays no extra await; WebCrypto (`webVerifiers`, on
 * Workers) always answers with a promise; a JWT-signed delivery (Gemini) verifies asynchronously, and a
 * thin payload (OpenAI, Gemini, Anthropic) is parsed by fetching the object from the status API.
 */
export interface WebhookReceiver {
  readonly provider: string;
  /**
   * Throws `signature-invalid` when the headers cannot carry a signature of the provider's scheme
   * (missing, or a stale timestamp): checked before the body is read, so an unsigned sender is
   * refused at once rather than held while its body trickles in. Absent: only `verify` checks.
   */
  checkHeaders?: SignatureHeaderCheck | undefined;
  /** Throws `signature-invalid` unless the headers sign these exact bytes. */
  verify(body: Uint8Array, headers: ReceivedWebhookHeaders): VerifiedWebhook | Promise<VerifiedWebhook>;
  /**
   * Throws `invalid-observation` (400) for a body it cannot use, and a retryable error when the
   * provider could not be asked (the sender retries the webhook). A result or error too large or
   * too deep to store is not refused: the ingest path stores a marked stand-in and keeps the state.
   */
  parse(
    body: Uint8Array,
    delivery: VerifiedWebhook,
    context: WebhookParseContext,
  ): Observation | Promise<Observation>;
}

/** A scheme's look at the headers alone, before the body is read (see `checkHeaders`). */
export type SignatureHeaderCheck = (headers: ReceivedWebhookHeaders) => void;

/** The verification half of a receiver: one signature scheme with its secrets. */
export type WebhookVerifier = WebhookReceiver["verify"];
