import { effectListSchema, effectSchema } from "./api-schemas.js";
import { listQuerySchema } from "./effect-routes.js";
import type { RouteDoc } from "./openapi/route-doc.js";

/** The effects routes in /openapi.json (see openapi/route-doc.ts). */
export const EFFECT_ROUTE_DOCS: RouteDoc[] = [
  {
    method: "get",
    path: "/v1/effects",
    operationId: "listEffects",
    tag: "effects",
    summary: "List effects, newest first",
    auth: "api",
    query: listQuerySchema,
    responses: { 200: { description: "a page of effects", schema: effectListSchema } },
  },
  {
    method: "post",
    path: "/v1/effects/{id}/retry",
    operationId: "retryEffect",
    tag: "effects",
    summary: "Re-arm a dead (or pending) effect",
    auth: "api",
    params: { id: { description: "the effect's id" } },
    responses: { 200: { description: "the effect, due now", schema: effectSchema } },
    errors: ["not-found", "conflict"],
  },
];
