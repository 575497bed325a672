import { parkedListSchema } from "./api-schemas.js";
import type { RouteDoc } from "./openapi/route-doc.js";
import { listQuerySchema } from "./parked-routes.js";

/** The parked route in /openapi.json (see openapi/route-doc.ts). */
export const PARKED_ROUTE_DOCS: RouteDoc[] = [
  {
    method: "get",
    path: "/v1/parked",
    operationId: "listParked",
    tag: "parked",
    summary: "The early-completion inbox, newest first",
    auth: "api",
    query: listQuerySchema,
    responses: { 200: { description: "a page of parked observations", schema: parkedListSchema } },
  },
];
