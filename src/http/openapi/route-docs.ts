import * as z from "zod";
import { EFFECT_ROUTE_DOCS } from "../effect-route-docs.js";
import { INTENT_ROUTE_DOCS } from "../intent-route-docs.js";
import { JOB_ROUTE_DOCS } from "../job-route-docs.js";
import { OPS_ROUTE_DOCS } from "../ops-route-docs.js";
import { PARKED_ROUTE_DOCS } from "../parked-route-docs.js";
import { RUN_ROUTE_DOCS, WORKER_ROUTE_DOCS } from "../run-route-docs.js";
import { SETTLEMENT_ROUTE_DOCS } from "../settlement-route-docs.js";
import { WEBHOOK_ROUTE_DOCS } from "../webhook-route-docs.js";
import type { RouteDoc } from "./route-doc.js";

/**
 * Every operation of /openapi.json. To describe a new route: export its `RouteDoc[]` from a
 * `<name>-route-docs.ts` beside its `<name>-routes.ts` (as `JOB_ROUTE_DOCS` in job-route-docs.ts),
 * so a route file holds handlers only, and spread it here, under the same condition the app
 * mounts the route on. The contract test (test/openapi/openapi-document.test.ts) fails until the
 * two agree.
 */
export function routeDocs(options: { runs: boolean }): RouteDoc[] {
  return [
    ...WEBHOOK_ROUTE_DOCS,
    ...JOB_ROUTE_DOCS,
    ...EFFECT_ROUTE_DOCS,
    ...PARKED_ROUTE_DOCS,
    ...SETTLEMENT_ROUTE_DOCS,
    ...INTENT_ROUTE_DOCS,
    ...(options.runs ? [...RUN_ROUTE_DOCS, ...WORKER_ROUTE_DOCS] : []),
    ...OPS_ROUTE_DOCS,
    ...API_REFERENCE_ROUTE_DOCS,
  ];
}

/** The assets /docs/api loads, all served by the app itself (no CDN). */
export const API_REFERENCE_ASSETS = [
  "swagger-ui.css",
  "swagger-ui-bundle.js",
  "init.js",
  "favicon-32x32.png",
] as const;
export type ApiReferenceAsset = (typeof API_REFERENCE_ASSETS)[number];

/** api-reference-routes.ts: this description and its reference page (public: see there). */
const API_REFERENCE_ROUTE_DOCS: RouteDoc[] = [
  {
    method: "get",
    path: "/openapi.json",
    operationId: "openApiDocument",
    tag: "operations",
    summary: "This description (OpenAPI 3.1)",
    auth: "public",
    responses: { 200: { description: "the document", schema: z.record(z.string(), z.unknown()) } },
    errors: ["forbidden"],
  },
  {
    method: "get",
    path: "/docs/api",
    operationId: "apiReferencePage",
    tag: "operations",
    summary: "The API reference page (Swagger UI, served offline)",
    auth: "public",
    responses: { 200: { description: "the page", contentType: "text/html", schema: z.string() } },
    errors: ["forbidden"],
  },
  {
    method: "get",
    path: "/docs/api/{asset}",
    operationId: "apiReferenceAsset",
    tag: "operations",
    summary: "A file of the reference page",
    auth: "public",
    params: { asset: { description: "one of the page's files", schema: z.enum(API_REFERENCE_ASSETS) } },
    responses: {
      200: { description: "the file", contentType: "application/octet-stream", schema: z.string() },
    },
    errors: ["forbidden", "not-found"],
  },
];
