import type { Hono } from "hono";
import * as z from "zod";
import { effectToJson } from "../core/job-json.js";
import { LIMITS, queryInteger } from "../core/validation.js";
import { retryEffect } from "../engine/effect-admin.js";
import type { Finality } from "../engine/finality.js";
import { engineOf } from "../engine/finality-engine.js";
import type { AppEnv } from "./app-env.js";
import { addListRoute } from "./list-route.js";

export const listQuerySchema = z.strictObject({
  status: z.enum(["pending", "delivering", "delivered", "dead"]).optional(),
  provider: z.string().min(1).max(LIMITS.providerNameLength).optional(),
  job: z.string().min(1).max(LIMITS.jobIdLength).optional(),
  limit: queryInteger(1, 500).optional(),
  cursor: z.string().min(1).max(200).optional(),
});

/** The outbox over HTTP: list effects, re-arm a dead one (a job's replay is in job-routes.ts). */
export function addEffectRoutes(app: Hono<AppEnv>, finality: Finality): void {
  const { store } = engineOf(finality);
  addListRoute(
    app,
    "/v1/effects",
    listQuerySchema,
    (query) =>
      store.listEffects({
        status: query.status,
        provider: query.provider,
        jobId: query.job,
        limit: query.limit,
        cursor: query.cursor,
      }),
    effectToJson,
  );

  app.post("/v1/effects/:id/retry", async (c) => {
    c.set("route", "/v1/effects/:id/retry");
    const effect = await retryEffect(finality, c.req.param("id"));
    return c.json(effectToJson(effect));
  });
}
