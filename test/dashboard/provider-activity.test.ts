import { setImmediate as nextTurn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { createProviderActivity } from "../../src/dashboard/provider-activity.js";
import { noopMetrics } from "../../src/http/service-metrics.js";

// A webhook's activity mark is taken once per event-loop turn: the turn's last outcome per
// provider, one clock read; a read in the same turn already sees it.

describe("provider activity: webhook marks", () => {
  it("one clock read per turn, the last outcome per provider, seen at once", async () => {
    let reads = 0;
    let clock = 1_000;
    const activity = createProviderActivity(["acme", "other"], () => {
      reads++;
      return clock;
    });
    const metrics = activity.observe(noopMetrics);
    metrics.webhookReceived("acme", "applied");
    metrics.webhookReceived("acme", "duplicate-delivery");
    metrics.webhookReceived("other", "applied");
    metrics.webhookReceived("nobody", "unknown-provider");
    expect(activity.lastWebhook("acme")).toEqual({ at: 1_000, outcome: "duplicate-delivery" });
    expect(activity.lastWebhook("other")).toEqual({ at: 1_000, outcome: "applied" });
    expect(activity.lastWebhook("nobody")).toBeUndefined();
    expect(reads).toBe(1);
    clock = 2_000;
    metrics.webhookReceived("other", "signature-invalid");
    await nextTurn();
    expect(reads).toBe(2);
    expect(activity.lastWebhook("other")).toEqual({ at: 2_000, outcome: "signature-invalid" });
    expect(activity.lastWebhook("acme")).toEqual({ at: 1_000, outcome: "duplicate-delivery" });
  });
});
