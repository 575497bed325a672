import {
  claimSchema,
  enqueueSchema,
  heartbeatSchema,
  runEventsQuerySchema,
  runListQuerySchema,
  workerEventSchema,
  workerIdSchema,
} from "../runs/run-validation.js";
import type { RouteDoc } from "./openapi/route-doc.js";
import {
  claimAnswerSchema,
  heartbeatAnswerSchema,
  runEventListSchema,
  runListSchema,
  runWithAttemptsSchema,
  workerEventAnswerSchema,
} from "./run-api-schemas.js";

const runId = { id: { description: "the run's id" } };
const attemptId = { id: { description: "the attempt's id (`attempt.id` of the claim)" } };

/** The application's side of runs in /openapi.json (see openapi/route-doc.ts). */
export const RUN_ROUTE_DOCS: RouteDoc[] = [
  {
    method: "post",
    path: "/v1/runs",
    operationId: "enqueueRun",
    tag: "runs",
    summary: "Queue a run for your workers",
    auth: "api",
    body: { schema: enqueueSchema },
    responses: {
      201: { description: "queued", schema: runWithAttemptsSchema },
      200: {
        description: "the run already queued under this `idempotencyKey`",
        schema: runWithAttemptsSchema,
      },
    },
    errors: ["conflict"],
  },
  {
    method: "get",
    path: "/v1/runs",
    operationId: "listRuns",
    tag: "runs",
    summary: "List runs, newest first",
    auth: "api",
    query: runListQuerySchema,
    responses: { 200: { description: "a page of runs", schema: runListSchema } },
  },
  {
    method: "get",
    path: "/v1/runs/{id}",
    operationId: "getRun",
    tag: "runs",
    summary: "Read a run and its attempts",
    auth: "api",
    params: runId,
    responses: { 200: { description: "the run", schema: runWithAttemptsSchema } },
    errors: ["not-found"],
  },
  {
    method: "get",
    path: "/v1/runs/{id}/events",
    operationId: "listRunEvents",
    tag: "runs",
    summary: "A run's audit trail, oldest first",
    auth: "api",
    params: runId,
    query: runEventsQuerySchema,
    responses: { 200: { description: "the events", schema: runEventListSchema } },
    errors: ["not-found"],
  },
  {
    method: "post",
    path: "/v1/runs/{id}/cancel",
    operationId: "cancelRun",
    tag: "runs",
    summary: "Cancel a run",
    description:
      "A queued run is `cancelled` at once; a running one gets `cancelRequested: true`, which its " +
      "worker learns at its next heartbeat.",
    auth: "api",
    params: runId,
    responses: { 200: { description: "the run", schema: runWithAttemptsSchema } },
    errors: ["not-found", "payload-too-large"],
  },
];

/** The workers' side in /openapi.json (see openapi/route-doc.ts). */
export const WORKER_ROUTE_DOCS: RouteDoc[] = [
  {
    method: "post",
    path: "/v1/workers/{workerId}/claim",
    operationId: "claimRun",
    tag: "workers",
    summary: "Claim a run (long-poll)",
    description: "Waits up to `waitSeconds` (at most 30) for a run of the kinds asked and allowed.",
    auth: "worker",
    params: { workerId: { description: "names the worker process in the ledger", schema: workerIdSchema } },
    body: { schema: claimSchema, required: false },
    responses: {
      200: { description: "a run and its lease", schema: claimAnswerSchema },
      204: { description: "nothing arrived within `waitSeconds`" },
    },
  },
  {
    method: "post",
    path: "/v1/attempts/{id}/heartbeat",
    operationId: "heartbeat",
    tag: "workers",
    summary: "Extend an attempt's lease",
    description: "409 `stale-generation` (with a `reason`) when the lease is gone: stop working on it.",
    auth: "worker",
    params: attemptId,
    body: { schema: heartbeatSchema },
    responses: { 200: { description: "the lease, extended", schema: heartbeatAnswerSchema } },
    errors: ["not-found", "stale-generation"],
  },
  {
    method: "post",
    path: "/v1/attempts/{id}/events",
    operationId: "reportAttemptEvent",
    tag: "workers",
    summary: "Report an attempt's progress or end",
    description:
      "`sequence` increases per attempt: a repeated one is a `duplicate`, an older one `out_of_order`.",
    auth: "worker",
    params: attemptId,
    body: { schema: workerEventSchema },
    responses: { 200: { description: "how it was taken", schema: workerEventAnswerSchema } },
    errors: ["not-found", "stale-generation"],
  },
];
