import { genericWebhookBodySchema, webhookAnswerSchema } from "./api-schemas.js";
import type { RouteDoc } from "./openapi/route-doc.js";

/** The webhook route in /openapi.json (see openapi/route-doc.ts). */
export const WEBHOOK_ROUTE_DOCS: RouteDoc[] = [
  {
    method: "post",
    path: "/webhooks/{provider}",
    operationId: "receiveWebhook",
    tag: "webhooks",
    summary: "A provider's webhook",
    description:
      "The signature is checked over the raw bytes before anything is parsed. 200 only once the " +
      "delivery id, the job, its event and any outbox row are committed; duplicates and stale " +
      "events are 200 too (`outcome` says which), so the sender stops retrying. The body is the " +
      "provider's own format; the `generic` provider's is described here.",
    auth: "signature",
    params: { provider: { description: "the provider instance's name in the configuration" } },
    headers: {
      "webhook-id": { description: "the delivery id: a repeated one is recorded, never applied twice" },
      "webhook-timestamp": { description: "seconds since the epoch" },
    },
    body: { schema: genericWebhookBodySchema },
    responses: {
      200: { description: "committed: applied, or recorded and ignored", schema: webhookAnswerSchema },
    },
    errors: ["invalid-observation", "store-unavailable", "shutting-down", "effect-failed"],
  },
];
