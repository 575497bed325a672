import type { Hono } from "hono";
import { z } from "zod";
import { FinalityError } from "../core/errors.js";
import { intentToJson } from "../core/intent-model.js";
import { jobToJson } from "../core/job-json.js";
import { attachSchema, intentSchema, LIMITS, parseWith } from "../core/validation.js";
import type { Finality } from "../engine/finality.js";
import { engineOf } from "../engine/finality-engine.js";
import type { AppEnv } from "./app-env.js";
import { attachedIntentSchema, intentAnswerSchema, intentListSchema } from "./intent-api-schemas.js";
import { parseJsonBody } from "./job-routes.js";
import type { RouteDoc } from "./openapi/route-doc.js";
import { readBody } from "./read-body.js";
import type { ServiceMetrics } from "./service-metrics.js";

export const listQuerySchema = z.strictObject({
  status: z.enum(["open", "attached", "orphaned"]).optional(),
  provider: z.string().min(1).max(LIMITS.providerNameLength).optional(),
  limit: z
    .string()
    .regex(/^[0-9]+$/, "must be a whole number")
    .transform(Number)
    .pipe(z.number().int().min(1).max(500))
    .optional(),
});

/**
 * Submission intents over HTTP (a contract, like the generic webhook's): record before calling the
 * provider, attach the remote id after. `POST /v1/intents` answers 201 the first time and 200 for
 * the same body again; another body under the same key is 409.
 */
export function addIntentRoutes(
  app: Hono<AppEnv>,
  options: { finality: Finality; metrics: ServiceMetrics; bodyLimitBytes: number },
): void {
  const { finality, metrics, bodyLimitBytes } = options;

  app.post("/v1/intents", async (c) => {
    c.set("route", "/v1/intents");
    const outcome = await finality.recordIntent(parseJsonBody(await readBody(c.req.raw, bodyLimitBytes)));
    metrics.eventRecorded("intent", outcome.created, outcome.created ? null : "duplicate");
    c.var.log.provider = outcome.intent.provider;
    return c.json(intentToJson(outcome.intent), outcome.created ? 201 : 200);
  });

  app.get("/v1/intents", async (c) => {
    c.set("route", "/v1/intents");
    const query = parseWith(listQuerySchema, c.req.query(), "invalid-request");
    const items = await engineOf(finality).store.listIntents(query);
    return c.json({ items: items.map(intentToJson) });
  });

  app.get("/v1/intents/:key", async (c) => {
    c.set("route", "/v1/intents/:key");
    const key = c.req.param("key");
    const intent = await finality.getIntent(key);
    if (intent === null) throw new FinalityError("not-found", `no intent ${key}`, { details: { key } });
    return c.json(intentToJson(intent));
  });

  app.post("/v1/intents/:key/attach", async (c) => {
    c.set("route", "/v1/intents/:key/attach");
    const body = parseWith(
      attachSchema,
      parseJsonBody(await readBody(c.req.raw, bodyLimitBytes)),
      "invalid-request",
    );
    const outcome = await finality.attachIntent(c.req.param("key"), body.id, "api");
    metrics.eventRecorded("intent", outcome.attached, outcome.attached ? null : "already-registered");
    c.var.log.provider = outcome.job.provider;
    c.var.log.jobId = outcome.job.id;
    return c.json({ ...intentToJson(outcome.intent), job: jobToJson(outcome.job) });
  });
}

const keyParam = {
  key: { description: "the application's own key for the submission; `/` is sent as `%2F`" },
};

/** The intents routes in /openapi.json (see openapi/route-doc.ts). */
export const INTENT_ROUTE_DOCS: RouteDoc[] = [
  {
    method: "post",
    path: "/v1/intents",
    operationId: "recordIntent",
    tag: "intents",
    summary: "Record an intent before calling the provider",
    description:
      "The same body again (metadata compared as JSON, key order aside) is the same intent, 200. " +
      "Another body under the key is 409 `conflict` with `reason: intent-key-reused`.",
    auth: "api",
    body: { schema: intentSchema },
    responses: {
      201: { description: "recorded", schema: intentAnswerSchema },
      200: { description: "recorded before, with the same body", schema: intentAnswerSchema },
    },
    errors: ["conflict", "unknown-provider"],
  },
  {
    method: "get",
    path: "/v1/intents",
    operationId: "listIntents",
    tag: "intents",
    summary: "List intents, newest first",
    auth: "api",
    query: listQuerySchema,
    responses: { 200: { description: "the intents (`limit` defaults to 50)", schema: intentListSchema } },
  },
  {
    method: "get",
    path: "/v1/intents/{key}",
    operationId: "getIntent",
    tag: "intents",
    summary: "Read an intent",
    auth: "api",
    params: keyParam,
    responses: { 200: { description: "the intent", schema: intentAnswerSchema } },
    errors: ["not-found", "invalid-request"],
  },
  {
    method: "post",
    path: "/v1/intents/{key}/attach",
    operationId: "attachIntent",
    tag: "intents",
    summary: "Attach the remote id the provider answered",
    description:
      "Registers the job with the intent's kind and metadata (a job adopted first is the same job). " +
      "The same id again is 200 and changes nothing; another id, or an id attached to another " +
      "intent, is 409 `conflict`.",
    auth: "api",
    params: keyParam,
    body: { schema: attachSchema },
    responses: { 200: { description: "the intent and its job", schema: attachedIntentSchema } },
    errors: ["not-found", "conflict", "unknown-provider"],
  },
];
