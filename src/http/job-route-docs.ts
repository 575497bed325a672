import { apiObservationSchema, registrationSchema } from "../core/validation.js";
import {
  effectItemsSchema,
  jobEventListSchema,
  jobListSchema,
  jobSchema,
  observationAnswerSchema,
} from "./api-schemas.js";
import { eventsQuerySchema, jobQuerySchema, listQuerySchema } from "./job-routes.js";
import type { RouteDoc } from "./openapi/route-doc.js";

const jobParams = {
  provider: { description: "the provider instance's name" },
  id: { description: "the job's id; `/` may be sent as is or as `%2F`" },
};

/** The jobs routes in /openapi.json (see openapi/route-doc.ts). */
export const JOB_ROUTE_DOCS: RouteDoc[] = [
  {
    method: "post",
    path: "/v1/jobs",
    operationId: "registerJob",
    tag: "jobs",
    summary: "Register a job",
    description:
      "An upsert that never changes an existing state; applies the job's parked observations. " +
      "409 `conflict` with `reason: already-settled-pruned` for an id whose tombstone is kept.",
    auth: "api",
    body: { schema: registrationSchema },
    responses: {
      201: { description: "registered", schema: jobSchema },
      200: { description: "already known (kind and metadata filled if missing)", schema: jobSchema },
    },
    errors: ["conflict"],
  },
  {
    method: "get",
    path: "/v1/jobs",
    operationId: "listJobs",
    tag: "jobs",
    summary: "List jobs, newest first",
    auth: "api",
    query: listQuerySchema,
    responses: { 200: { description: "a page of jobs", schema: jobListSchema } },
  },
  {
    method: "get",
    path: "/v1/jobs/{provider}/{id}",
    servedBy: "/v1/jobs/:provider/:rest{.+}",
    operationId: "getJob",
    tag: "jobs",
    summary: "Read a job, or wait for it to settle",
    description:
      "A 404 for a job with parked observations carries `reason: parked` and `parked`; for a pruned " +
      "job, `reason: already-settled-pruned` and `tombstone`. With `wait=N` (seconds, 0–60) the " +
      "answer comes at once if the job is settled, else when it settles (woken by the commit, on " +
      "any replica) or after N seconds, with the job as it then is; the `Finality-Settled` header " +
      "says which (`true` or `false`).",
    auth: "api",
    params: jobParams,
    query: jobQuerySchema,
    responses: {
      200: {
        description: "the job (with `wait`: and the `Finality-Settled: true|false` header)",
        schema: jobSchema,
      },
    },
    errors: ["not-found", "invalid-request"],
  },
  {
    method: "get",
    path: "/v1/jobs/{provider}/{id}/events",
    servedBy: "/v1/jobs/:provider/:rest{.+}",
    operationId: "listJobEvents",
    tag: "jobs",
    summary: "A job's audit trail, oldest first",
    auth: "api",
    params: jobParams,
    query: eventsQuerySchema,
    responses: { 200: { description: "the events", schema: jobEventListSchema } },
    errors: ["not-found"],
  },
  {
    method: "post",
    path: "/v1/jobs/{provider}/{id}/observations",
    servedBy: "/v1/jobs/:provider/:rest{.+}",
    operationId: "observeJob",
    tag: "jobs",
    summary: "Record what the application knows of a job",
    description: "Through the same reducer as a webhook, with source `api`.",
    auth: "api",
    params: jobParams,
    headers: {
      "idempotency-key": { description: "makes a retried call a `duplicate-delivery` (1–252 characters)" },
    },
    body: { schema: apiObservationSchema },
    responses: { 200: { description: "how the ledger took it", schema: observationAnswerSchema } },
    errors: ["invalid-observation", "not-found", "effect-failed"],
  },
  {
    method: "post",
    path: "/v1/jobs/{provider}/{id}/replay-effects",
    servedBy: "/v1/jobs/:provider/:rest{.+}",
    operationId: "replayJobEffects",
    tag: "jobs",
    summary: "Replay a settled job's effects under the same idempotency keys",
    auth: "api",
    params: jobParams,
    responses: { 200: { description: "the effects enqueued again", schema: effectItemsSchema } },
    errors: ["not-found", "conflict"],
  },
];
