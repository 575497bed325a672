import type { Hono } from "hono";
import * as z from "zod";
import { FinalityError } from "../core/errors.js";
import { intentToJson } from "../core/intent-model.js";
import { jobToJson } from "../core/job-json.js";
import { attachSchema, LIMITS, parseWith } from "../core/validation.js";
import type { Finality } from "../engine/finality.js";
import { engineOf } from "../engine/finality-engine.js";
import type { AppEnv } from "./app-env.js";
import { requestBody } from "./body-limit.js";
import { parseJsonBody } from "./job-routes.js";
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
  options: { finality: Finality; metrics: ServiceMetrics },
): void {
  const { finality, metrics } = options;

  app.post("/v1/intents", async (c) => {
    c.set("route", "/v1/intents");
    const outcome = await finality.recordIntent(parseJsonBody(await requestBody(c)));
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
    const body = parseWith(attachSchema, parseJsonBody(await requestBody(c)), "invalid-request");
    const outcome = await finality.attachIntent(c.req.param("key"), body.id, "api");
    metrics.eventRecorded("intent", outcome.attached, outcome.attached ? null : "already-registered");
    c.var.log.provider = outcome.job.provider;
    c.var.log.jobId = outcome.job.id;
    return c.json({ ...intentToJson(outcome.intent), job: jobToJson(outcome.job) });
  });
}
