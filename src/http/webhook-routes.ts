import type { Hono } from "hono";
import { captureContext, inSpanSync, resumeIn, tracingOn } from "../engine/tracing.js";
import type { AppEnv } from "./app-env.js";
import { requestBody } from "./body-limit.js";
import type { AfterVerify, WebhookIntake } from "./webhook-intake.js";
import { continueVerifiedTrace, traceWebhook, WEBHOOK_ROUTE } from "./webhook-tracing.js";

/**
 * POST /webhooks/:provider. Answers 200 only once the ingest has committed; duplicates and stale
 * events are 200 too (the body says which) so that the sender stops retrying. On Node the same
 * intake is also reached through a fast path that skips the router (node-webhook-handler.ts).
 */
export function addWebhookRoutes(
  app: Hono<AppEnv>,
  intake: WebhookIntake,
  options: {
    /** Follow a verified sender's `traceparent` (`telemetry.trustIncomingTraceparent`); else it is ignored. */
    trustTraceparent?: boolean | undefined;
  },
): void {
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
        () => requestBody(c),
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
