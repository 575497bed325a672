import { setImmediate as nextTurn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { createPromMetrics } from "../../src/http/prom-metrics.js";

// The per-webhook counters are counted in plain numbers and handed to prom-client once per
// event-loop turn (and before each scrape): never lost, never late on /metrics.

const stats = async () => ({
  jobsByState: {},
  openJobs: 0,
  stuckJobs: 0,
  conflictJobs: 0,
  effectsByStatus: {},
  oldestOpenSubmittedAt: null,
  dueJobs: 0,
});

async function value(
  metrics: ReturnType<typeof createPromMetrics>,
  name: string,
  labels: Record<string, string>,
) {
  const metric = await metrics.registry.getSingleMetric(name)?.get();
  const found = metric?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
  return found?.value ?? 0;
}

describe("prom metrics: per-webhook counters", () => {
  it("reach prom-client once per turn, all of them", async () => {
    const metrics = createPromMetrics({ stats, processMetrics: false });
    for (let i = 0; i < 5; i++) {
      metrics.webhookReceived("acme", "applied");
      metrics.requestFinished("/webhooks/:provider", "POST", 200);
      metrics.eventRecorded("webhook", i < 3, i < 3 ? null : "stale-seq");
    }
    // Counted, not yet handed over in this turn.
    expect(await value(metrics, "finality_webhooks_received_total", { provider: "acme" })).toBe(0);
    await nextTurn();
    expect(
      await value(metrics, "finality_webhooks_received_total", { provider: "acme", outcome: "applied" }),
    ).toBe(5);
    expect(await value(metrics, "finality_http_requests_total", { status: "200" })).toBe(5);
    expect(await value(metrics, "finality_events_applied_total", { source: "webhook" })).toBe(3);
    expect(await value(metrics, "finality_events_ignored_total", { reason: "stale-seq" })).toBe(2);
    // The next turn's counts add to them.
    metrics.webhookReceived("acme", "applied");
    await nextTurn();
    expect(await value(metrics, "finality_webhooks_received_total", { outcome: "applied" })).toBe(6);
  });

  it("a scrape in the same turn shows every count", async () => {
    const metrics = createPromMetrics({ stats, processMetrics: false });
    metrics.webhookReceived("acme", "duplicate-delivery");
    metrics.webhookReceived("acme", "duplicate-delivery");
    const { body } = await metrics.render();
    expect(body).toContain(
      'finality_webhooks_received_total{provider="acme",outcome="duplicate-delivery"} 2',
    );
  });
});
