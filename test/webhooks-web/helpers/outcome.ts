import { expect } from "vitest";
import { FinalityError } from "../../../src/core/errors.js";
import { nodeVerifiers } from "../../../src/webhooks/node-verifiers.js";
import type { ReceivedWebhookHeaders, VerifiedWebhook } from "../../../src/webhooks/signature-common.js";
import type { WebhookSignatureConfig } from "../../../src/webhooks/verifier-choice.js";
import { webVerifiers } from "../../../src/webhooks/web-verifiers.js";

/** What a verifier made of one delivery: accepted as, or refused with which error. */
export type Outcome =
  | { accepted: VerifiedWebhook }
  | { refused: { code: string; reason: unknown; message: string; details: unknown } };

/** Builds the verifier and checks one delivery; an error other than FinalityError is re-thrown. */
export async function outcomeOf(check: () => VerifiedWebhook | Promise<VerifiedWebhook>): Promise<Outcome> {
  try {
    return { accepted: await check() };
  } catch (error) {
    if (!(error instanceof FinalityError)) throw error;
    return {
      refused: {
        code: error.code,
        reason: error.details.reason,
        message: error.message,
        details: error.details,
      },
    };
  }
}

/** Headers as the HTTP layer hands them over: the three Standard Webhooks ones and `get`. */
export function receivedHeaders(headers: Readonly<Record<string, string>>): ReceivedWebhookHeaders {
  return {
    id: headers["webhook-id"],
    timestamp: headers["webhook-timestamp"],
    signature: headers["webhook-signature"],
    get: (name) => headers[name],
  };
}

export interface Delivery {
  body: Uint8Array;
  headers: Readonly<Record<string, string>>;
}

/** The node:crypto and the WebCrypto outcome of the same delivery under the same configuration. */
export async function bothOutcomes(
  config: WebhookSignatureConfig | undefined,
  nowMs: number,
  delivery: Delivery,
): Promise<{ node: Outcome; web: Outcome }> {
  const now = () => nowMs;
  const headers = receivedHeaders(delivery.headers);
  const node = await outcomeOf(() => nodeVerifiers.webhook("p", config, now)(delivery.body, headers));
  const web = await outcomeOf(() => webVerifiers.webhook("p", config, now)(delivery.body, headers));
  return { node, web };
}

/** Asserts that both paths agree, and returns their common outcome. */
export async function expectSameOutcome(
  config: WebhookSignatureConfig | undefined,
  nowMs: number,
  delivery: Delivery,
): Promise<Outcome> {
  const { node, web } = await bothOutcomes(config, nowMs, delivery);
  expect(web).toEqual(node);
  return node;
}

/** "accepted", else the refusal's reason (or its code, for a refusal without one). */
export function reasonOf(outcome: Outcome): unknown {
  return "refused" in outcome ? (outcome.refused.reason ?? outcome.refused.code) : "accepted";
}
