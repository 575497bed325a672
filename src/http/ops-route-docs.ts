import * as z from "zod";
import { healthSchema, readySchema } from "./api-schemas.js";
import type { RouteDoc } from "./openapi/route-doc.js";

/** The operations routes in /openapi.json (see openapi/route-doc.ts). */
export const OPS_ROUTE_DOCS: RouteDoc[] = [
  {
    method: "get",
    path: "/healthz",
    operationId: "health",
    tag: "operations",
    summary: "Liveness: the process answers",
    auth: "public",
    responses: { 200: { description: "alive", schema: healthSchema } },
  },
  {
    method: "get",
    path: "/readyz",
    operationId: "ready",
    tag: "operations",
    summary: "Readiness: the database answers and is migrated",
    auth: "public",
    responses: { 200: { description: "ready", schema: readySchema } },
    errors: ["store-unavailable"],
  },
  {
    method: "get",
    path: "/metrics",
    operationId: "metrics",
    tag: "operations",
    summary: "Prometheus metrics (text exposition format)",
    description: "Behind the cross-site guard, without a token: counts, never jobs.",
    auth: "public",
    responses: { 200: { description: "the metrics", contentType: "text/plain", schema: z.string() } },
    errors: ["forbidden"],
  },
];
