import { Hono } from "hono";
import { createApp } from "../../src/app/create-app.js";
import { parseConfig } from "../../src/config/load-config.js";
import { addDashboardRoutes } from "../../src/dashboard/dashboard-routes.js";
import { finalityFromConfig } from "../../src/host/node/finality-from-config.js";
import type { AppEnv } from "../../src/http/app-env.js";
import { nodeApiReferenceAssets } from "../../src/http/node-api-reference-assets.js";
import { createWebhookReceivers } from "../../src/providers/node-providers.js";
import { createRunService } from "../../src/runs/run-service.js";
import { ACME } from "../http/helpers/in-process.js";

/** The app as `finality serve` builds it (runs included), on an in-memory SQLite ledger. */
export async function openApiApp(options: { runs?: boolean; assets?: boolean } = {}) {
  const config = parseConfig({ providers: { acme: ACME } }, {}, { db: ":memory:" });
  const finality = await finalityFromConfig(config);
  const runs = options.runs === false ? undefined : createRunService({ finality });
  const app = createApp({
    finality,
    config,
    ...(runs ? { runs } : {}),
    receivers: createWebhookReceivers(config.providers, () => finality.clock.now()),
    ...(options.assets === false ? {} : { apiReferenceAssets: nodeApiReferenceAssets() }),
  });
  // The dashboard's HTML pages, added alone: they are for people and stay out of the document.
  const dashboard = new Hono<AppEnv>();
  addDashboardRoutes(dashboard, { finality, config, runs: runs !== undefined });
  return {
    app,
    finality,
    dashboardRoutes: dashboard.routes,
    async close() {
      await runs?.close();
      await finality.close();
    },
  };
}

/** `GET /v1/jobs/:provider/:id` ↔ `get /v1/jobs/{provider}/{id}`. */
export const toHonoPath = (path: string) => path.replace(/\{([^}]+)\}/g, ":$1");
