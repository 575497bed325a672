import type { Hono } from "hono";
import { FinalityError } from "../core/errors.js";
import type { DestinationStatus } from "../engine/effect-target.js";
import type { Finality } from "../engine/finality.js";
import { engineOf } from "../engine/finality-engine.js";
import type { AppEnv } from "./app-env.js";
import type { ServiceMetrics } from "./service-metrics.js";

/** Liveness, readiness and Prometheus metrics. Open without a token: they reveal counts, not jobs. */
export function addOpsRoutes(
  app: Hono<AppEnv>,
  finality: Finality,
  metrics: ServiceMetrics,
  destinations?: () => DestinationStatus[],
): void {
  app.get("/healthz", (c) => {
    c.set("route", "/healthz");
    return c.json({ status: "ok" });
  });

  app.get("/readyz", async (c) => {
    c.set("route", "/readyz");
    const ready = await engineOf(finality)
      .store.ready()
      .catch(() => false);
    if (!ready)
      throw new FinalityError("store-unavailable", "the database is not reachable or not fully migrated");
    // A broker that is down is reported, never a reason to answer 503: webhook intake does not
    // need it (its effects wait in the outbox), and a load balancer taking this instance out of
    // rotation for it would turn a broker outage into lost webhooks.
    const brokers = destinations?.() ?? [];
    return c.json(brokers.length > 0 ? { status: "ready", destinations: brokers } : { status: "ready" });
  });

  app.get("/metrics", async (c) => {
    c.set("route", "/metrics");
    const { contentType, body } = await metrics.render();
    return c.body(body, 200, { "content-type": contentType });
  });
}
