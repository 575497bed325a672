import type { Hono } from "hono";
import { FinalityError } from "../core/errors.js";
import type { Finality } from "../engine/finality.js";
import type { AppEnv } from "./app-env.js";
import type { ServiceMetrics } from "./service-metrics.js";

/** Liveness, readiness and Prometheus metrics. Open without a token: they reveal counts, not jobs. */
export function addOpsRoutes(app: Hono<AppEnv>, finality: Finality, metrics: ServiceMetrics): void {
  app.get("/healthz", (c) => {
    c.set("route", "/healthz");
    return c.json({ status: "ok" });
  });

  app.get("/readyz", async (c) => {
    c.set("route", "/readyz");
    const ready = await finality.store.ready().catch(() => false);
    if (!ready)
      throw new FinalityError("store-unavailable", "the database is not reachable or not fully migrated");
    return c.json({ status: "ready" });
  });

  app.get("/metrics", async (c) => {
    c.set("route", "/metrics");
    const { contentType, body } = await metrics.render();
    return c.body(body, 200, { "content-type": contentType });
  });
}
