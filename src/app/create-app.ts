import { type Context, Hono } from "hono";
import type { FinalityConfig } from "../config/config-schema.js";
import { FinalityError } from "../core/errors.js";
import type { DashboardReads } from "../dashboard/dashboard-reads.js";
import { addDashboardRoutes } from "../dashboard/dashboard-routes.js";
import type { ProviderActivity } from "../dashboard/provider-activity.js";
import type { DestinationStatus } from "../engine/effect-target.js";
import type { Finality } from "../engine/finality.js";
import { type ApiReferenceAssets, addApiReferenceRoutes } from "../http/api-reference-routes.js";
import type { AppEnv } from "../http/app-env.js";
import { bearerAuth, bearerTokenOf } from "../http/bearer-auth.js";
import { bodyLimit } from "../http/body-limit.js";
import { constantTimeEqual } from "../http/constant-time-equal.js";
import { crossSiteGuard, isUnguardedPath } from "../http/cross-site-guard.js";
import { addEffectRoutes } from "../http/effect-routes.js";
import { addIntentRoutes } from "../http/intent-routes.js";
import { addJobRoutes, jobPathMethodNotAllowed } from "../http/job-routes.js";
import { addOpsRoutes } from "../http/ops-routes.js";
import { addParkedRoutes } from "../http/parked-routes.js";
import { problemResponse, toProblem } from "../http/problem.js";
import { type Logger, requestLog, silentLogger } from "../http/request-log.js";
import { traceApiRequests } from "../http/request-tracing.js";
import { addRunRoutes, addWorkerRoutes } from "../http/run-routes.js";
import { noopMetrics, type ServiceMetrics } from "../http/service-metrics.js";
import { addSettlementRoutes } from "../http/settlement-routes.js";
import { createWebhookIntake, type WebhookIntake } from "../http/webhook-intake.js";
import { addWebhookRoutes } from "../http/webhook-routes.js";
import { createWorkerAuthorizer, type WorkerAuthorizer } from "../http/worker-auth.js";
import type { RunService } from "../runs/run-service.js";
import type { WebhookReceiver } from "../webhooks/receiver-types.js";

type AppOptions = AppBaseOptions &
  (
    | {
        /**
         * Webhook receivers per provider instance (`createWebhookReceivers` on Node; the Workers
         * entry builds them with WebCrypto verifiers).
         */
        receivers: ReadonlyMap<string, WebhookReceiver>;
        intake?: undefined;
      }
    | {
        /** The webhook intake, when the caller shares it with a fast path (see node-webhook-handler.ts). */
        intake: WebhookIntake;
        receivers?: undefined;
      }
  );

interface AppBaseOptions {
  finality: Finality;
  config: FinalityConfig;
  metrics?: ServiceMetrics;
  logger?: Logger;
  /** Runs on the application's own workers; their routes exist only when given. */
  runs?: RunService;
  /** Who may call the worker routes; built from `config.workers.pools` when omitted. */
  authorizeWorker?: WorkerAuthorizer;
  /** Each provider's last webhook and poll, for the dashboard's configuration page. */
  activity?: ProviderActivity;
  /** Where the dashboard's lists and overview read (the store when omitted; see dashboard-reads.ts). */
  dashboardReads?: (request: Request) => DashboardReads | undefined;
  /** Swagger UI's files for /docs/api (the Node host reads them from swagger-ui-dist). */
  apiReferenceAssets?: ApiReferenceAssets;
  /** The broker effects' connections, reported by `/readyz` (none without broker effects). */
  destinations?: () => DestinationStatus[];
  /** How often an idle settlement stream (SSE) sends a heartbeat comment (15 s). */
  settlementHeartbeatMs?: number;
  /** Aborted when the server stops: settlement long polls answer and streams end, so closing does not wait on them. */
  shutdown?: AbortSignal;
}

/**
 * The HTTP app. Web-standard only (Request, Response, streams, TextDecoder, WebCrypto), so that the
 * same app runs on Node and on Workers (src/cloudflare); the Node server and process wiring live in
 * node-server.ts and the CLI.
 */
export function createApp(options: AppOptions): Hono<AppEnv> {
  const { finality, config } = options;
  const metrics = options.metrics ?? noopMetrics;
  const logger = options.logger ?? silentLogger;
  const intake =
    options.intake ??
    createWebhookIntake({
      finality,
      metrics,
      receivers: options.receivers,
    });

  const app = new Hono<AppEnv>();
  app.use(requestLog(logger, metrics));
  app.use(bodyLimit(config.server.bodyLimitBytes));
  const runs = options.runs;
  const authorizeWorker = runs
    ? (options.authorizeWorker ??
      createWorkerAuthorizer(config.workers.pools, { allowAnonymous: config.server.apiToken === undefined }))
    : undefined;
  app.use("/v1/*", traceApiRequests(trustedTraceCaller(config, authorizeWorker)));
  // Every route but the webhooks and the health checks (see isUnguardedPath): the API, the
  // dashboard's pages and forms, /metrics, and the 404s and 405s. Registered before every route.
  const loopbackOnly = config.server.apiToken === undefined;
  const apiGuard = crossSiteGuard({ loopbackOnly });
  const pageGuard = crossSiteGuard({ loopbackOnly, allowNavigation: true });
  app.use(async (c, next) => {
    const path = c.req.path;
    if (isUnguardedPath(path)) return next();
    return (path === "/v1" || path.startsWith("/v1/") ? apiGuard : pageGuard)(c, next);
  });
  // Worker routes carry their pool's token, not the API token: registered before its check.
  if (runs && authorizeWorker) addWorkerRoutes(app, { runs, authorizeWorker, metrics });
  if (config.server.apiToken !== undefined) app.use("/v1/*", bearerAuth(config.server.apiToken));

  addWebhookRoutes(app, intake, { trustTraceparent: config.telemetry.trustIncomingTraceparent });
  addJobRoutes(app, { finality, metrics, shutdown: options.shutdown });
  addEffectRoutes(app, finality);
  addParkedRoutes(app, finality);
  addSettlementRoutes(app, {
    finality,
    heartbeatMs: options.settlementHeartbeatMs,
    shutdown: options.shutdown,
  });
  addIntentRoutes(app, { finality, metrics });
  if (runs) addRunRoutes(app, { runs, metrics });
  addOpsRoutes(app, finality, metrics, options.destinations);
  addApiReferenceRoutes(app, { runs: runs !== undefined, assets: options.apiReferenceAssets });
  addDashboardRoutes(app, {
    finality,
    config,
    runs: runs !== undefined,
    activity: options.activity ?? null,
    reads: options.dashboardReads,
  });

  // Registered after the real handlers: reached only by the methods those did not take.
  allowOnly(app, "/webhooks/:provider", "POST");
  allowOnly(app, "/v1/jobs", "GET, HEAD, POST");
  app.all("/v1/jobs/:provider/:rest{.+}", jobPathMethodNotAllowed);
  allowOnly(app, "/v1/effects", "GET, HEAD");
  allowOnly(app, "/v1/effects/:id/retry", "POST");
  allowOnly(app, "/v1/parked", "GET, HEAD");
  allowOnly(app, "/v1/settlements", "GET, HEAD");
  allowOnly(app, "/v1/settlements/stream", "GET");
  allowOnly(app, "/v1/intents", "GET, HEAD, POST");
  allowOnly(app, "/v1/intents/:key", "GET, HEAD");
  allowOnly(app, "/v1/intents/:key/attach", "POST");
  if (runs) {
    allowOnly(app, "/v1/runs", "GET, HEAD, POST");
    allowOnly(app, "/v1/runs/:id", "GET, HEAD");
    allowOnly(app, "/v1/runs/:id/events", "GET, HEAD");
    for (const path of [
      "/v1/runs/:id/cancel",
      "/v1/workers/:workerId/claim",
      "/v1/attempts/:id/heartbeat",
      "/v1/attempts/:id/events",
    ])
      allowOnly(app, path, "POST");
  }
  for (const path of ["/healthz", "/readyz", "/metrics", "/openapi.json", "/docs/api", "/docs/api/:asset"])
    allowOnly(app, path, "GET, HEAD");

  app.notFound(async (c) => {
    c.set("route", "unmatched");
    // A person typing a URL gets a page; programs (and everything under the API's prefixes) get
    // the problem document, whatever they accept.
    if (wantsPage(c.req.path, c.req.header("accept"))) return (await dashboardLayout()).renderNotFoundPage(c);
    return problemResponse(toProblem(new FinalityError("not-found", `no route for ${c.req.path}`)).problem);
  });

  app.onError(async (error, c) => {
    const { problem, exposed } = toProblem(error);
    if (!exposed) logger.error({ err: error, path: c.req.path }, "unexpected error");
    // A dashboard page asked with a bad query (say a cursor edited by hand): a page, not JSON.
    if ((problem.status === 400 || problem.status === 413) && wantsPage(c.req.path, c.req.header("accept")))
      return (await dashboardLayout()).renderRefusalPage(c, problem.status, problem.title, problem.detail);
    return problemResponse(problem);
  });

  return app;
}

function allowOnly(app: Hono<AppEnv>, path: string, allow: string): void {
  app.all(path, (c) => {
    c.set("route", path);
    throw new FinalityError("method-not-allowed", `${c.req.method} is not allowed here; use ${allow}`, {
      details: { allow },
    });
  });
}

/**
 * The dashboard's frame, for a browser's 404 and refused page: imported when first needed, like the
 * dashboard's pages (dashboard-routes.ts), since it brings Hono JSX.
 */
const dashboardLayout = () => import("../dashboard/layout.js");

const API_PREFIXES = ["/v1/", "/webhooks/", "/metrics", "/health", "/__finality/"];

/** A browser's navigation (Accept names text/html) to a path outside the API. */
function wantsPage(path: string, accept: string | undefined): boolean {
  if (accept === undefined || !accept.includes("text/html")) return false;
  return !API_PREFIXES.some((prefix) => path === prefix.replace(/\/$/, "") || path.startsWith(prefix));
}

/**
 * Whose `traceparent` the API follows: nobody's unless `telemetry.trustIncomingTraceparent`, and
 * then only a caller holding a credential this server takes (the API token, or a worker pool's;
 * any caller of a loopback-only server without a token). The span starts before the route's own
 * check, so the credential is checked here.
 */
function trustedTraceCaller(
  config: FinalityConfig,
  authorizeWorker: WorkerAuthorizer | undefined,
): (c: Context<AppEnv>) => boolean {
  if (!config.telemetry.trustIncomingTraceparent) return () => false;
  const apiToken = config.server.apiToken;
  // Without an API token the server listens on loopback only and takes every caller.
  if (apiToken === undefined) return () => true;
  return (c) => {
    const token = bearerTokenOf(c.req.header("authorization"));
    return constantTimeEqual(token, apiToken) || authorizeWorker?.(token) != null;
  };
}
