import type { Context, Hono } from "hono";
import { loadOnce } from "../core/load-once.js";
import type { AppEnv } from "../http/app-env.js";
import { DASHBOARD_ROUTES, type DashboardOptions } from "./dashboard-route-table.js";

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
