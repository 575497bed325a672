import type { Context } from "hono";
import type { FinalityConfig } from "../config/config-schema.js";
import type { Finality } from "../engine/finality.js";
import type { AppEnv } from "../http/app-env.js";
import type { DashboardReads } from "./dashboard-reads.js";
import type { ProviderActivity } from "./provider-activity.js";

// The dashboard's routes and options, shared by the table registered at start (dashboard-routes.ts)
// and the pages and forms it imports on first use (dashboard-pages.tsx, dashboard-forms.ts).

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
