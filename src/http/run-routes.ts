import type { Context, Hono } from "hono";
import type { z } from "zod";
import { FinalityError } from "../core/errors.js";
import { parseWith } from "../core/validation.js";
import { claimToJson, runEventToJson, runToJson, runWithAttemptsToJson } from "../runs/run-json.js";
import type { RunService } from "../runs/run-service.js";
import {
  claimSchema,
  enqueueSchema,
  heartbeatSchema,
  runEventsQuerySchema,
  runListQuerySchema,
  workerEventSchema,
  workerIdSchema,
} from "../runs/run-validation.js";
import type { AppEnv } from "./app-env.js";
import { requestBody } from "./body-limit.js";
import { addListRoute } from "./list-route.js";
import type { ServiceMetrics } from "./service-metrics.js";
import { type WorkerAuthorizer, type WorkerPool, workerPoolOf } from "./worker-auth.js";
import { traceWorkerCallback } from "./worker-callback-tracing.js";

interface RunRouteOptions {
  runs: RunService;
  metrics?: ServiceMetrics;
}

interface WorkerRouteOptions extends RunRouteOptions {
  authorizeWorker: WorkerAuthorizer;
}

/**
 * The application's side of runs, under the API token like the rest of /v1:
 * POST /v1/runs, GET /v1/runs, GET /v1/runs/:id, GET /v1/runs/:id/events, POST /v1/runs/:id/cancel.
 */
export function addRunRoutes(app: Hono<AppEnv>, options: RunRouteOptions): void {
  const { runs } = options;

  app.post("/v1/runs", async (c) => {
    c.set("route", "/v1/runs");
    const body = parseWith(enqueueSchema, await jsonBody(c), "invalid-request");
    const { run, created } = await runs.enqueue(body);
    options.metrics?.eventRecorded("api", created, created ? null : "already-registered");
    c.var.log.runId = run.id;
    return c.json({ ...runToJson(run), attempts: [] }, created ? 201 : 200);
  });

  addListRoute(app, "/v1/runs", runListQuerySchema, (query) => runs.listRuns(query), runToJson);

  app.get("/v1/runs/:id", async (c) => {
    c.set("route", "/v1/runs/:id");
    const id = c.req.param("id");
    c.var.log.runId = id;
    const found = await runs.getRun(id);
    if (found === null) throw runNotFound(id);
    return c.json(runWithAttemptsToJson(found.run, found.attempts));
  });

  app.get("/v1/runs/:id/events", async (c) => {
    c.set("route", "/v1/runs/:id/events");
    const id = c.req.param("id");
    const page = parseWith(runEventsQuerySchema, c.req.query(), "invalid-request");
    const events = await runs.runEvents(id, page);
    if (events.length === 0 && (await runs.getRun(id)) === null) throw runNotFound(id);
    return c.json({ items: events.map(runEventToJson) });
  });

  app.post("/v1/runs/:id/cancel", async (c) => {
    c.set("route", "/v1/runs/:id/cancel");
    const id = c.req.param("id");
    c.var.log.runId = id;
    await requestBody(c);
    const run = await runs.cancel(id);
    const found = await runs.getRun(run.id);
    return c.json(runWithAttemptsToJson(run, found?.attempts ?? []));
  });
}

/**
 * The workers' side, authenticated by worker pool token (not the API token): register these
 * BEFORE the API token middleware on /v1/*, so that a worker never needs the API token.
 * POST /v1/workers/:workerId/claim, POST /v1/attempts/:id/heartbeat, POST /v1/attempts/:id/events.
 */
export function addWorkerRoutes(app: Hono<AppEnv>, options: WorkerRouteOptions): void {
  const { runs, authorizeWorker } = options;

  /** What an attempt's callbacks start with: the caller's pool, the attempt's id (logged), the body. */
  async function readAttemptCall<S extends z.ZodType>(c: Context<AppEnv>, schema: S) {
    const pool = workerPoolOf(c, authorizeWorker);
    const id = c.req.param("id") as string;
    c.var.log.attemptId = id;
    const body = parseWith(schema, await jsonBody(c), "invalid-request");
    return { pool, id, body };
  }

  app.post("/v1/workers/:workerId/claim", async (c) => {
    c.set("route", "/v1/workers/:workerId/claim");
    const pool = workerPoolOf(c, authorizeWorker);
    const workerId = parseWith(workerIdSchema, c.req.param("workerId"), "invalid-request");
    c.var.log.workerId = workerId;
    const body = parseWith(claimSchema, await jsonBody(c), "invalid-request");
    const claimed = await runs.claim({
      workerId,
      kinds: kindsFor(pool, body.kinds),
      leaseSeconds: body.leaseSeconds,
      waitSeconds: body.waitSeconds,
      start: body.start,
      signal: c.req.raw.signal,
    });
    if (claimed === null) return c.body(null, 204);
    c.var.log.runId = claimed.run.id;
    c.var.log.attemptId = claimed.attempt.id;
    return c.json(claimToJson(claimed.run, claimed.attempt));
  });

  app.post("/v1/attempts/:id/heartbeat", async (c) => {
    c.set("route", "/v1/attempts/:id/heartbeat");
    const { pool, id, body } = await readAttemptCall(c, heartbeatSchema);
    const { attempt, run } = await runs.heartbeat(id, body, pool.kinds);
    return c.json({
      attemptId: attempt.id,
      generation: attempt.generation,
      status: attempt.status,
      leaseExpiresAt: attempt.leaseExpiresAt === null ? null : new Date(attempt.leaseExpiresAt).toISOString(),
      cancelRequested: run.cancelRequested,
    });
  });

  app.post("/v1/attempts/:id/events", async (c) => {
    c.set("route", "/v1/attempts/:id/events");
    const { pool, id, body } = await readAttemptCall(c, workerEventSchema);
    const { next, ...event } = body;
    const nextClaim =
      next === undefined
        ? undefined
        : {
            kinds: kindsFor(pool, next.kinds),
            leaseSeconds: next.leaseSeconds,
            start: next.start,
            signal: c.req.raw.signal,
          };
    const result = await traceWorkerCallback(c.var.traceContext, id, body.type, () =>
      runs.recordEvent(id, event, pool.kinds, nextClaim),
    );
    options.metrics?.eventRecorded("worker", result.outcome === "applied", result.outcome);
    c.var.log.outcome = result.outcome;
    return c.json({
      outcome: result.outcome,
      applied: result.outcome === "applied",
      attemptId: result.attempt.id,
      sequence: body.sequence,
      attemptStatus: result.attempt.status,
      runId: result.run.id,
      runStatus: result.run.status,
      cancelRequested: result.run.cancelRequested,
      ...(next === undefined
        ? {}
        : { next: result.next ? claimToJson(result.next.run, result.next.attempt) : null }),
    });
  });
}

/** The kinds a claim may take: what it asks for, within what its pool allows. */
function kindsFor(pool: WorkerPool, asked: readonly string[] | undefined): readonly string[] | null {
  if (pool.kinds === null) return asked ?? null;
  if (asked === undefined) return pool.kinds;
  const refused = asked.find((kind) => !pool.kinds?.includes(kind));
  if (refused !== undefined) {
    throw new FinalityError("invalid-request", `kinds: pool "${pool.name}" may not claim kind "${refused}"`, {
      details: { field: "kinds" },
    });
  }
  return asked;
}

function runNotFound(id: string): FinalityError {
  return new FinalityError("not-found", `no run ${id}`, { details: { id } });
}

const decoder = new TextDecoder("utf-8", { fatal: true });

/** The body as JSON; an empty body is `{}` (claims and cancels need none). */
async function jsonBody(c: Context<AppEnv>): Promise<unknown> {
  const bytes = await requestBody(c);
  if (bytes.byteLength === 0) return {};
  try {
    return JSON.parse(decoder.decode(bytes));
  } catch {
    throw new FinalityError("invalid-request", "the body is not valid JSON", {
      details: { field: "(root)" },
    });
  }
}
