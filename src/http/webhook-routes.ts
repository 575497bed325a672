import type { Hono } from "hono";
import { captureContext, inSpanSync, resumeIn, tracingOn } from "../engine/tracing.js";
import type { AppEnv } from "./app-env.js";
import { readBody } from "./read-body.js";
import type { WebhookIntake } from "./webhook-intake.js";
import { traceWebhook } from "./webhook-tracing.js";

export const WEBHOOK_ROUTE = "/webhooks/:provider";

/**
 * POST /webhooks/:provider. Answers 200 only once the ingest has committed; duplicates and stale
 * events are 200 too (the body says which) so that the sender stops retrying. On Node the same
 * intake is also reached through a fast path that skips the router (node-webhook-handler.ts).
 */
export function addWebhookRoutes(app: Hono<AppEnv>, intake: WebhookIntake, bodyLimitBytes: number): void {
  app.post(WEBHOOK_ROUTE, async (c) => {
    c.set("route", WEBHOOK_ROUTE);
    const receive = () =>
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
      );
    if (!tracingOn()) return c.json(await receive());
    let response: Response | undefined;
    await traceWebhook(
      c.req.param("provider"),
      c.req.header("traceparent"),
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
