import { jobToJson } from "../core/job-json.js";
import { signStandardWebhook } from "../webhooks/standard-webhooks.js";
import { DeliveryError } from "./delivery-error.js";
import type { UrlDeliverer } from "./dispatcher.js";
import { parseRetryAfter } from "./poller.js";

/**
 * Delivers an effect as a Standard Webhooks POST: `webhook-id` is the effect's idempotency key,
 * identical on every retry, so a receiver dedupes on it. Only a 2xx counts as delivered;
 * redirects are not followed (a 3xx is a failure: the receiver's address is wrong).
 */
export function createHttpEffectDeliverer(
  options: { userAgent?: string; now?: () => number } = {},
): UrlDeliverer {
  const now = options.now ?? Date.now;
  return async (definition, delivery, signal) => {
    if (!definition.url) throw new DeliveryError(`effect "${definition.name}" has no url`);
    const body = JSON.stringify({
      type: delivery.type,
      effect: delivery.effect,
      idempotencyKey: delivery.idempotencyKey,
      attempt: delivery.attempt,
      job: jobToJson(delivery.job),
    });
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "user-agent": options.userAgent ?? "finality",
      "idempotency-key": delivery.idempotencyKey,
      "finality-attempt": String(delivery.attempt),
    };
    if (definition.secret) {
      Object.assign(
        headers,
        signStandardWebhook({
          id: delivery.idempotencyKey,
          timestampSeconds: now() / 1000,
          body,
          secret: definition.secret,
        }),
      );
    } else {
      headers["webhook-id"] = delivery.idempotencyKey;
    }
    let response: Response;
    try {
      response = await fetch(definition.url, { method: "POST", headers, body, signal, redirect: "manual" });
    } catch (error) {
      const reason = signal.aborted ? "timed out" : error instanceof Error ? error.message : String(error);
      throw new DeliveryError(`POST ${definition.url} failed: ${reason}`);
    }
    // Drain the body so the connection can be reused.
    await response.arrayBuffer().catch(() => undefined);
    if (response.status >= 200 && response.status < 300) return;
    throw new DeliveryError(
      `POST ${definition.url} answered ${response.status}`,
      parseRetryAfter(response.headers.get("retry-after"), now()),
    );
  };
}
