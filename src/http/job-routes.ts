import type { Context, Hono } from "hono";
import * as z from "zod";
import { FinalityError } from "../core/errors.js";
import { effectToJson, eventToJson, jobToJson } from "../core/job-json.js";
import { CANONICAL_STATES } from "../core/states.js";
import {
  API_DELIVERY_PREFIX,
  apiObservationSchema,
  LIMITS,
  parseJobKey,
  parseRegistration,
  parseWith,
  queryInteger,
} from "../core/validation.js";
import { replayEffects } from "../engine/effect-admin.js";
import type { Finality } from "../engine/finality.js";
import { engineOf } from "../engine/finality-engine.js";
import type { AppEnv } from "./app-env.js";
import { requestBody } from "./body-limit.js";
import { eitherAborts } from "./either-aborts.js";
import { addListRoute } from "./list-route.js";
import { parkedToJson, tombstoneToJson } from "./parked-routes.js";
import type { ServiceMetrics } from "./service-metrics.js";

interface JobRouteOptions {
  finality: Finality;
  metrics: ServiceMetrics;
  /** Aborted when the server stops: a `?wait=` on a job answers at once with the job as it is. */
  shutdown?: AbortSignal | undefined;
}

/** On an answer to `?wait=`: `true` when the job had settled, `false` when the wait ran out. */
const SETTLED_HEADER = "Finality-Settled";

export const listQuerySchema = z.strictObject({
  state: z.enum(CANONICAL_STATES).optional(),
  provider: z.string().min(1).max(LIMITS.providerNameLength).optional(),
  kind: z.string().min(1).max(LIMITS.kindLength).optional(),
  stuck: z
    .enum(["true", "false"], { error: "must be true or false" })
    .transform((v) => v === "true")
    .optional(),
  open: z
    .enum(["true", "false"], { error: "must be true or false" })
    .transform((v) => v === "true")
    .optional(),
  limit: queryInteger(1, 500).optional(),
  cursor: z.string().min(1).max(200).optional(),
});

/** Longest `?wait=` on a job, in seconds: under common proxy idle timeouts (60 s). */
const MAX_JOB_WAIT_SECONDS = 60;

export const jobQuerySchema = z.strictObject({
  wait: queryInteger(0, MAX_JOB_WAIT_SECONDS).optional(),
});

export const eventsQuerySchema = z.strictObject({
  after: queryInteger(0, Number.MAX_SAFE_INTEGER).optional(),
  limit: queryInteger(1, 10_000).optional(),
});

/** The JSON API over jobs. Job ids may contain `/`, raw or encoded as `%2F`. */
export function addJobRoutes(app: Hono<AppEnv>, options: JobRouteOptions): void {
  const { finality, metrics, shutdown } = options;

  app.post("/v1/jobs", async (c) => {
    c.set("route", "/v1/jobs");
    const input = parseJsonBody(await requestBody(c));
    const outcome = await finality.register(parseRegistration(input));
    metrics.eventRecorded("api", outcome.created, outcome.created ? null : "already-registered");
    c.var.log.provider = outcome.job.provider;
    c.var.log.jobId = outcome.job.id;
    return c.json(jobToJson(outcome.job), outcome.created ? 201 : 200);
  });

  addListRoute(app, "/v1/jobs", listQuerySchema, (query) => finality.listJobs(query), jobToJson);

  app.get("/v1/jobs/:provider/:rest{.+}", async (c) => {
    const target = jobPath(c, JOB_SUFFIXES);
    if (target.suffix === "/observations" || target.suffix === "/replay-effects")
      throw wrongMethod(c, target.suffix);
    c.var.log.provider = target.provider;
    c.var.log.jobId = target.id;
    if (target.suffix === "/events") {
      c.set("route", "/v1/jobs/:provider/:id/events");
      const page = parseWith(eventsQuerySchema, c.req.query(), "invalid-request");
      const key = { provider: target.provider, id: target.id };
      const events = await finality.jobEvents(key, page);
      if (events.length === 0 && (await finality.getJob(key)) === null) throw notFound(target);
      return c.json({ items: events.map(eventToJson) });
    }
    c.set("route", "/v1/jobs/:provider/:id");
    const { wait } = parseWith(jobQuerySchema, c.req.query(), "invalid-request");
    const key = parseJobKey(target.provider, target.id);
    if (wait === undefined) {
      const job = await finality.getJob(key);
      if (job === null) throw await missingJob(finality, target);
      return c.json(jobToJson(job));
    }
    // Aborted after the answer too, so that no listener stays behind on the shutdown signal.
    const until = eitherAborts(c.req.raw.signal, shutdown);
    try {
      const waited = await engineOf(finality).jobWaiters.waitForSettled(key, {
        timeoutMs: wait * 1000,
        signal: until.signal,
      });
      if (waited.job === null) throw await missingJob(finality, target);
      c.header(SETTLED_HEADER, String(waited.settled));
      return c.json(jobToJson(waited.job));
    } finally {
      until.abort();
    }
  });

  app.post("/v1/jobs/:provider/:rest{.+}", async (c) => {
    const target = jobPath(c, JOB_SUFFIXES);
    if (target.suffix === null || target.suffix === "/events") throw wrongMethod(c, target.suffix);
    c.var.log.provider = target.provider;
    c.var.log.jobId = target.id;
    if (target.suffix === "/replay-effects") {
      c.set("route", "/v1/jobs/:provider/:id/replay-effects");
      const replayed = await replayEffects(finality, target);
      return c.json({ items: replayed.map(effectToJson) });
    }
    c.set("route", "/v1/jobs/:provider/:id/observations");
    const body = parseWith(apiObservationSchema, parseJsonBody(await requestBody(c)), "invalid-observation");
    const key = c.req.header("idempotency-key");
    if (
      key !== undefined &&
      (key.length === 0 || key.length > LIMITS.deliveryIdLength - API_DELIVERY_PREFIX.length)
    )
      throw new FinalityError("invalid-request", "idempotency-key must be 1 to 252 characters", {
        details: { field: "idempotency-key" },
      });
    const outcome = await finality.ingest({
      ...body,
      provider: target.provider,
      id: target.id,
      source: "api",
      ...(key === undefined ? {} : { deliveryId: `${API_DELIVERY_PREFIX}${key}` }),
    });
    metrics.eventRecorded("api", outcome.applied, outcome.reason);
    const result = outcome.reason ?? "applied";
    c.var.log.outcome = result;
    return c.json({
      outcome: result,
      applied: outcome.applied,
      job: outcome.job ? jobToJson(outcome.job) : null,
    });
  });
}

/** What may follow a job's id in its path; an id that itself ends so must be percent-encoded. */
const JOB_SUFFIXES = ["/events", "/observations", "/replay-effects"] as const;

/** 405 for a method the job path (with this suffix) does not take, naming those it does. */
function wrongMethod(c: Context<AppEnv>, suffix: string | null): FinalityError {
  const allow = suffix === "/observations" || suffix === "/replay-effects" ? "POST" : "GET, HEAD";
  c.set("route", `/v1/jobs/:provider/:id${suffix ?? ""}`);
  return new FinalityError("method-not-allowed", `${c.req.method} is not allowed here; use ${allow}`, {
    details: { allow },
  });
}

/** The 405 for any other method on a job path. */
export function jobPathMethodNotAllowed(c: Context<AppEnv>): never {
  throw wrongMethod(c, jobPath(c, JOB_SUFFIXES).suffix);
}

/**
 * Splits the path itself rather than trusting route params: the router decodes `%2F` to `/`,
 * which would make `a%2Fevents` (the job "a/events") look like the events of job "a".
 */
function jobPath(
  c: Context<AppEnv>,
  suffixes: readonly string[],
): { provider: string; id: string; suffix: string | null } {
  const rest = c.req.path.slice("/v1/jobs/".length);
  const slash = rest.indexOf("/");
  const encodedId = rest.slice(slash + 1);
  const suffix = suffixes.find((s) => encodedId.endsWith(s)) ?? null;
  return {
    provider: decode(rest.slice(0, slash), "provider"),
    id: decode(suffix ? encodedId.slice(0, -suffix.length) : encodedId, "id"),
    suffix,
  };
}

function decode(segment: string, field: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new FinalityError("invalid-request", `${field}: invalid percent-encoding`, { details: { field } });
  }
}

/**
 * The 404 of a job lookup says what the ledger does know: the observations parked for the job
 * until it is registered, or the tombstone of a job that settled and was pruned.
 */
async function missingJob(finality: Finality, key: { provider: string; id: string }): Promise<FinalityError> {
  const { store } = engineOf(finality);
  const tombstone = await store.getTombstone(key);
  if (tombstone !== null) {
    return new FinalityError("not-found", `job ${key.provider}/${key.id} settled and was pruned`, {
      details: { ...key, reason: "already-settled-pruned", tombstone: tombstoneToJson(tombstone) },
    });
  }
  const parked = await store.listParked({ ...key, limit: 100 });
  if (parked.items.length === 0) return notFound(key);
  return new FinalityError(
    "not-found",
    `no job ${key.provider}/${key.id} yet: ${parked.items.length}${parked.nextCursor ? "+" : ""} observation(s) are parked until it is registered`,
    { details: { ...key, reason: "parked", parked: parked.items.reverse().map(parkedToJson) } },
  );
}

function notFound(key: { provider: string; id: string }): FinalityError {
  return new FinalityError("not-found", `no job ${key.provider}/${key.id}`, {
    details: { provider: key.provider, id: key.id },
  });
}

const decoder = new TextDecoder("utf-8", { fatal: true });

export function parseJsonBody(body: Uint8Array): unknown {
  try {
    return JSON.parse(decoder.decode(body));
  } catch {
    throw new FinalityError("invalid-request", "the body is not valid JSON", {
      details: { field: "(root)" },
    });
  }
}
