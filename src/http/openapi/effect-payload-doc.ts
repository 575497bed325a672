/**
 * The `webhooks` entry of /openapi.json: what Finality POSTs to an effect's URL
 * (engine/http-effect-target.ts). The receiver implements it; Finality calls it.
 */
export function effectWebhookOperation(payload: Record<string, unknown>): Record<string, unknown> {
  const header = (name: string, description: string, required = true) => ({
    name,
    in: "header",
    required,
    description,
    schema: { type: "string" },
  });
  return {
    operationId: "effectDelivery",
    // Finality signs it (webhook-signature); the receiver's own auth is its URL's business.
    security: [],
    summary: "An effect: a job settled (or was flagged stuck), or an intent was flagged orphaned",
    description:
      "Sent once per effect, retried on a schedule (5 s, 30 s, 2 min, 10 min, 30 min, 1 h, then hourly, " +
      "±20 % jitter, at least the receiver's `Retry-After`) until it is delivered or dead. Only a 2xx " +
      "counts; redirects are not followed. Dedupe on `webhook-id`, the same on every attempt.",
    parameters: [
      header("webhook-id", "the effect's idempotency key, identical on every attempt"),
      header("webhook-timestamp", "seconds since the epoch (when the effect has a `secret`)", false),
      header(
        "webhook-signature",
        "`v1,<base64 HMAC-SHA256 of id.timestamp.body>` with the effect's `secret` (Standard Webhooks)",
        false,
      ),
      header("idempotency-key", "the same as `webhook-id`"),
      header("finality-attempt", "1 for the first attempt, then 2, 3, ..."),
    ],
    requestBody: { required: true, content: { "application/json": { schema: payload } } },
    responses: {
      "2XX": { description: "delivered: not sent again" },
      default: { description: "not delivered: retried later (a `Retry-After` is honoured)" },
    },
  };
}
