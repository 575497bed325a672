import { SpanKind, trace } from "@opentelemetry/api";
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tracingOn } from "../../src/engine/tracing.js";
import { sendWebhook } from "../http/helpers/webhooks.js";
import {
  AwaitedSpanExporter,
  byName,
  KeptSpanExporter,
  only,
  serveWithEffect,
  startReceiver,
} from "./helpers.js";

// One completion's story as one trace: a signed webhook settles a job with a URL effect; the
// receiver refuses the first attempt (503) and takes the second. All in-process over loopback:
// the real `serve`, the real SQLite file, the real dispatcher; spans go to an in-memory exporter
// given to `serve` in place of the OTLP one.

describe("a webhook that settles a job with an HTTP effect", () => {
  const exporter = new AwaitedSpanExporter();
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let served: Awaited<ReturnType<typeof serveWithEffect>>;

  beforeAll(async () => {
    receiver = await startReceiver([503]);
    served = await serveWithEffect({
      receiverUrl: receiver.url,
      telemetry: { serviceName: "finality-trace-test", sampleRatio: 1, trustIncomingTraceparent: true },
      spanExporter: exporter,
    });
  }, 60_000);
  afterAll(async () => {
    await served?.cleanup();
    await receiver?.close();
  });

  it("makes one trace: intake, verify, the ingest transaction, answer, and both delivery attempts", async () => {
    const sent = await sendWebhook(served.service.url, "acme", { jobId: "job-1", state: "succeeded" });
    expect(sent.status).toBe(200);
    const headers = await receiver.received(2);
    const spans = await exporter.spansUntil(
      (all) => byName(all, "send notify").filter((s) => s.attributes["finality.effect.outcome"]).length === 2,
    );

    const intake = only(spans, "receive webhook");
    const traceId = intake.spanContext().traceId;
    expect(new Set(spans.map((s) => s.spanContext().traceId))).toEqual(new Set([traceId]));
    expect(intake.parentSpanContext).toBeUndefined();
    expect(intake.kind).toBe(SpanKind.SERVER);
    expect(intake.attributes).toMatchObject({
      "http.route": "/webhooks/:provider",
      "http.response.status_code": 200,
      "messaging.destination.name": "acme",
      "finality.job.id": "job-1",
      "finality.outcome": "applied",
    });
    expect(intake.resource.attributes["service.name"]).toBe("finality-trace-test");

    const childOf = (name: string) => only(spans, name).parentSpanContext?.spanId;
    const intakeId = intake.spanContext().spanId;
    expect([childOf("verify"), childOf("ingest"), childOf("answer")]).toEqual([intakeId, intakeId, intakeId]);
    const ingest = only(spans, "ingest");
    expect(ingest.attributes).toMatchObject({
      "finality.source": "webhook",
      "finality.applied": true,
      "finality.job.state": "succeeded",
      "finality.effects.enqueued": 1,
    });

    // Both attempts continue the transaction that settled the job: its child, and linked to it.
    const attempts = byName(spans, "send notify").sort(
      (a, b) =>
        Number(a.attributes["finality.effect.attempt"]) - Number(b.attributes["finality.effect.attempt"]),
    );
    const ingestId = ingest.spanContext().spanId;
    for (const attempt of attempts) {
      expect(attempt.kind).toBe(SpanKind.PRODUCER);
      expect(attempt.parentSpanContext?.spanId).toBe(ingestId);
      expect(attempt.links.map((l) => l.context.spanId)).toEqual([ingestId]);
      expect(attempt.attributes["messaging.operation.type"]).toBe("send");
      expect(attempt.attributes["finality.effect.destination"]).toBe(new URL(receiver.url).origin);
    }
    expect(attempts.map((a) => a.attributes["finality.effect.attempt"])).toEqual([1, 2]);
    expect(attempts.map((a) => a.attributes["http.response.status_code"])).toEqual([503, 200]);
    expect(attempts.map((a) => a.attributes["finality.effect.outcome"])).toEqual(["retry", "delivered"]);

    // The receiver sees each attempt's own span as its parent.
    expect(headers.map((h) => h.traceparent)).toEqual(
      attempts.map((a) => `00-${traceId}-${a.spanContext().spanId}-01`),
    );
  }, 60_000);

  it("continues a caller's traceparent on the API", async () => {
    const caller = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    const response = await fetch(`${served.service.url}/v1/jobs`, {
      method: "POST",
      headers: { "content-type": "application/json", traceparent: caller },
      body: JSON.stringify({ provider: "acme", id: "job-api" }),
    });
    expect(response.status).toBeLessThan(300);
    const spans = await exporter.spansUntil((all) => byName(all, "POST /v1/jobs").length === 1);
    const server = only(spans, "POST /v1/jobs");
    expect(server.spanContext().traceId).toBe("0af7651916cd43dd8448eb211c80319c");
    expect(server.parentSpanContext?.spanId).toBe("b7ad6b7169203331");
    expect(server.attributes["http.response.status_code"]).toBe(response.status);
  }, 60_000);
});

describe("sampleRatio 0", () => {
  it("records no span, and still propagates the (unsampled) trace context", async () => {
    // Kept through the stop: an InMemorySpanExporter would be empty after it whatever it got.
    const exporter = new KeptSpanExporter();
    const receiver = await startReceiver();
    const served = await serveWithEffect({
      receiverUrl: receiver.url,
      telemetry: { sampleRatio: 0 },
      spanExporter: exporter,
    });
    try {
      await sendWebhook(served.service.url, "acme", { jobId: "job-unsampled", state: "succeeded" });
      const [headers] = await receiver.received(1);
      expect(headers?.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    } finally {
      await served.cleanup();
      await receiver.close();
    }
    expect(exporter.getFinishedSpans()).toEqual([]);
  }, 60_000);
});

describe("telemetry off (no otlpUrl)", () => {
  it("makes no span, even with a tracer provider registered globally, and sends no traceparent", async () => {
    const global = new InMemorySpanExporter();
    const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: global })] });
    trace.setGlobalTracerProvider(provider);
    const receiver = await startReceiver();
    const served = await serveWithEffect({ receiverUrl: receiver.url });
    try {
      expect(tracingOn()).toBe(false);
      await sendWebhook(served.service.url, "acme", { jobId: "job-off", state: "succeeded" });
      const [headers] = await receiver.received(1);
      expect(headers?.traceparent).toBeUndefined();
      expect(headers?.["webhook-id"]).toMatch(/^fin_/);
    } finally {
      await served.cleanup();
      await receiver.close();
      trace.disable();
    }
    expect(global.getFinishedSpans()).toEqual([]);
  }, 60_000);
});
