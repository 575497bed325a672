import type { z } from "zod";
import type { ErrorCode } from "../../core/errors.js";

/**
 * How one operation is described in /openapi.json. Each `<name>-routes.ts` has a sibling
 * `<name>-route-docs.ts` exporting the docs of its routes (`JOB_ROUTE_DOCS`, ...), and
 * route-docs.ts lists those arrays; the schemas are the very ones the routes validate with, so
 * the document cannot drift from them. test/openapi/openapi-document.test.ts fails when a route
 * the app serves has no doc, or a doc names a route the app does not serve.
 */
export interface RouteDoc {
  method: "get" | "post" | "put" | "patch" | "delete";
  /** The OpenAPI path, `{param}` style: `/v1/runs/{id}`. */
  path: string;
  /**
   * The router's pattern that serves it, when it is not `path` in Hono's `:param` style (the
   * job routes take ids holding `/` through one `:rest{.+}` pattern).
   */
  servedBy?: string;
  operationId: string;
  tag: RouteTag;
  summary: string;
  description?: string;
  /** Who may call it: the API token, a worker pool token, a webhook signature, or anyone. */
  auth: "api" | "worker" | "signature" | "public";
  /** Path parameters; a plain string when omitted. */
  params?: Record<string, { description: string; schema?: z.ZodType }>;
  query?: z.ZodObject;
  headers?: Record<string, { description: string; required?: boolean }>;
  /** The JSON request body; `required: false` for bodies that may be empty (claims, cancels). */
  body?: { schema: z.ZodType; required?: boolean; description?: string };
  /** Successful answers by status; `schema` is JSON unless `contentType` says otherwise. */
  responses: Record<number, { description: string; schema?: z.ZodType; contentType?: string }>;
  /** The problem codes it may answer besides those of its `auth` and the ones every route has. */
  errors?: readonly ErrorCode[];
}

export const ROUTE_TAGS = {
  jobs: "Remote jobs in the ledger: register, read, observe",
  effects: "The transactional outbox",
  parked: "Observations waiting for their job's registration",
  settlements: "The settlement feed: every settlement in commit order, behind a cursor",
  intents: "Submission intents: recorded before the provider call, attached after it",
  runs: "Runs on your own workers: the application's side (API token)",
  workers: "Runs on your own workers: the workers' side (worker pool token)",
  webhooks: "Provider webhooks, checked by signature",
  operations: "Health, readiness, metrics and this description",
} as const;
type RouteTag = keyof typeof ROUTE_TAGS;
