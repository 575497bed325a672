import type { Context, Hono } from "hono";
import type { FinalityConfig } from "../config/config-schema.js";
import { loadOnce } from "../core/load-once.js";
import type { Finality } from "../engine/finality.js";
import type { AppEnv } from "../http/app-env.js";
import type { DashboardReads } from "./dashboard-reads.js";
import type { ProviderActivity } from "./provider-activity.js";

export interface DashboardOptions {
  finality: Finality;
  config: FinalityConfig;
  /** True when the service runs the runs API (runs then appear as jobs of provider `runs`). */
  runs: boolean;
  /** Each provider's last webhook and poll; null where this process does not record them. */
  activity?: ProviderActivity | null;
  /**
   * Where the overview, jobs, effects and parked pages read (the store by default; a sharded
   * Workers ledger merges every shard's). The job, runs and intents pages read the store.
   */
  reads?: ((request: Request) => DashboardReads | undefined) | undefined;
}

/**
 * Every route of the dashboard, "METHOD path", in the order they are registered: the pages, then
 * the forms (dashboard-forms.ts). dashboard-pages.tsx answers each of them.
 */
export const DASHBOARD_ROUTES = [
  "GET /",
  "GET /jobs",
  "GET /jobs/:provider/:rest{.+}",
  "GET /effects",
  "GET /runs",
  "GET /parked",
  "GET /intents",
  "GET /config",
  "GET /login",
  "POST /login",
  "POST /logout",
  "POST /effects/:id/retry",
  "POST /config/test-webhook",
] as const;

export type DashboardRoute = (typeof DASHBOARD_ROUTES)[number];
export type DashboardHandler = (c: Context<AppEnv>) => Response | Promise<Response>;

/** Paths the dashboard owns; none starts with /v1, /webhooks, /healthz, /readyz or /metrics. */
export const DASHBOARD_PATHS = [
  "/",
  "/jobs",
  "/jobs/*",
  "/effects",
  "/effects/*",
  "/runs",
  "/parked",
  "/intents",
  "/config",
  "/config/*",
  "/login",
  "/logout",
];

/**
 * The dashboard: server-rendered pages over the same ledger as the API, behind the same token
 * (dashboard-pages.tsx). Its routes are added here, when the app is made, since Hono's router
 * takes no route once it has answered a request; the pages' modules (Hono JSX and some 25 files,
 * ~6 MiB of an idle `serve`: issue 29) are imported by the first request to one of them, so a service
 * whose dashboard nobody opens never loads them.
 */
export function addDashboardRoutes(app: Hono<AppEnv>, options: DashboardOptions): void {
  const handlers = loadOnce(async () =>
    (await import("./dashboard-pages.js")).dashboardHandlers(app, options),
  );
  for (const route of DASHBOARD_ROUTES) {
    const [method, path] = route.split(" ") as ["GET" | "POST", string];
    const handler = async (c: Context<AppEnv>) => {
      c.set("route", path);
      return (await handlers())[route](c);
    };
    if (method === "GET") app.get(path, handler);
    else app.post(path, handler);
  }
}
