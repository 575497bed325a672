import type { Hono } from "hono";
import { captureContext, inSpanSync, resumeIn, tracingOn } from "../engine/tracing.js";
import { genericWebhookBodySchema, webhookAnswerSchema } from "./api-schemas.js";
import type { AppEnv } from "./app-env.js";
import type { RouteDoc } from "./openapi/route-doc.js";
import { readBody } from "./read-body.js";
import type { AfterVerify, WebhookIntake } from "./webhook-intake.js";
import { continueVerifiedTrace, traceWebhook } from "./webhook-tracing.js";

export const WEBHOOK_ROUTE = "/webhooks/:provider";

/**
 * POST /webhooks/:provider. Answers 200 only once the ingest has committed; duplicates and stale
 * events are 200 too (the body says which) so that the sender stops retrying. On Node the same
 * intake is also reached through a fast path that skips the router (node-webhook-handler.ts).
 */
export function addWebhookRoutes(
  app: Hono<AppEnv>,
  intake: WebhookIntake,
  options: {
    bodyLimitBytes: number;
    /** Follow a verified sender's `traceparent` (`telemetry.trustIncomingTraceparent`); else it is ignored. */
    trustTraceparent?: boolean | undefined;
  },
): void {
  const { bodyLimitBytes } = options;
  app.post(WEBHOOK_ROUTE, async (c) => {
    c.set("route", WEBHOOK_ROUTE);
    const receive = (afterVerify?: AfterVerify) =>
      intake.receive(
        c.req.param("provider"),
        {
          id: c.req.header("webhook-id"),
          timestamp: c.req.header("webhook-timestamp"),
          signature: c.req.header("webhook-signature"),
          get: (name) => c.req.header(name),
        },
        () => readBody(c.req.raw, bodyLimitBytes),
        c.var.log,
        afterVerify,
      );
    if (!tracingOn()) return c.json(await receive());
    // A sender's traceparent only when trusted, and then only once its signature is verified.
    const traceParent = options.trustTraceparent ? c.req.header("traceparent") : undefined;
    if (traceParent !== undefined)
      return c.json(await receive(continueVerifiedTrace(c.req.param("provider"), traceParent, c.var.log)));
    let response: Response | undefined;
    await traceWebhook(
      c.req.param("provider"),
      undefined,
      c.var.log,
      () => response?.status ?? 500,
      async () => {
        const traced = captureContext();
        const answer = await receive();
        response = resumeIn(traced, () => inSpanSync("answer", () => c.json(answer)));
      },
    );
    return response as Response;
  });
}

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
