import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postJson } from "../http/helpers/webhooks.js";
import { AwaitedSpanExporter, byName, only, serveWithEffect, startReceiver } from "./helpers.js";

// A worker reports its run succeeded, sending its own traceparent: the callback's spans continue
// the worker's trace, and the effect the run's end enqueues is delivered in that same trace.

describe("a worker callback that ends a run", () => {
  const exporter = new AwaitedSpanExporter();
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let served: Awaited<ReturnType<typeof serveWithEffect>>;

  beforeAll(async () => {
    receiver = await startReceiver();
    served = await serveWithEffect({
      receiverUrl: receiver.url,
      telemetry: { trustIncomingTraceparent: true },
      spanExporter: exporter,
    });
  }, 60_000);
  afterAll(async () => {
    await served?.cleanup();
    await receiver?.close();
  });

  it("continues the worker's trace through the callback to the run's effect", async () => {
    const url = served.service.url;
    expect((await postJson(`${url}/v1/runs`, { kind: "render" })).status).toBe(201);
    const claim = await postJson(`${url}/v1/workers/w1/claim`, { waitSeconds: 0 });
    const attempt = claim.body.attempt as { id: string; generation: number };
    const worker = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const done = await postJson(
      `${url}/v1/attempts/${attempt.id}/events`,
      { generation: attempt.generation, sequence: 1, type: "succeeded", output: { ok: true } },
      { traceparent: worker },
    );
    expect(done.status).toBe(200);
    const [headers] = await receiver.received(1);
    const spans = await exporter.spansUntil((all) => byName(all, "send notify").length === 1);

    const server = only(spans, "POST /v1/attempts/:id/events");
    expect(server.spanContext().traceId).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
    expect(server.parentSpanContext?.spanId).toBe("00f067aa0ba902b7");
    const callback = only(spans, "worker callback");
    expect(callback.parentSpanContext?.spanId).toBe(server.spanContext().spanId);
    expect(callback.attributes).toMatchObject({
      "finality.attempt.id": attempt.id,
      "finality.worker.event": "succeeded",
      "finality.outcome": "applied",
    });
    const send = only(spans, "send notify");
    expect(send.spanContext().traceId).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
    expect(send.parentSpanContext?.spanId).toBe(callback.spanContext().spanId);
    expect(headers?.traceparent).toBe(`00-4bf92f3577b34da6a3ce929d0e0e4736-${send.spanContext().spanId}-01`);
  }, 60_000);
});
