import type { InMemorySpanExporter } from "@opentelemetry/sdk-trace";
import { describe, expect, it } from "vitest";
import { SECRET, sendWebhook, signWith } from "../http/helpers/webhooks.js";
import {
  AwaitedSpanExporter,
  byName,
  KeptSpanExporter,
  only,
  serveWithEffect,
  startReceiver,
} from "./helpers.js";

// A caller's `traceparent` decides where spans go and whether they are kept (the sampler follows
// a remote parent). Anyone can send one: it is ignored unless `telemetry.trustIncomingTraceparent`,
// and even then a webhook's is followed only once its signature is verified, the API's only for
// a caller holding a credential. The real `serve` in-process, spans to an in-memory exporter.

const CALLER_TRACE = "0af7651916cd43dd8448eb211c80319c";
const CALLER = `00-${CALLER_TRACE}-b7ad6b7169203331-01`;
const API_TOKEN = "trace-trust-api-token-0123";

async function served(telemetry: Record<string, unknown>, exporter: InMemorySpanExporter) {
  const receiver = await startReceiver();
  const service = await serveWithEffect({
    receiverUrl: receiver.url,
    telemetry,
    spanExporter: exporter,
    env: { FINALITY_API_TOKEN: API_TOKEN },
  });
  return {
    url: service.service.url,
    receiver,
    /** Stops the service (its telemetry sends every span still queued) and the receiver. */
    async stop() {
      await service.cleanup();
      await receiver.close();
    },
  };
}

/** 20 webhooks with no signature, each carrying the caller's sampled traceparent: all 401. */
async function unsignedWithTraceparent(url: string): Promise<void> {
  for (let i = 0; i < 20; i++) {
    const body = JSON.stringify({ jobId: `forced-${i}`, state: "succeeded" });
    const sent = await sendWebhook(url, "acme", body, {
      headers: { "content-type": "application/json", traceparent: CALLER },
    });
    expect(sent.status).toBe(401);
  }
}

describe.each([false, true])("trustIncomingTraceparent %s, sampleRatio 0", (trust) => {
  it("unsigned webhooks and unauthenticated API calls with a sampled traceparent make no span", async () => {
    const exporter = new KeptSpanExporter();
    const service = await served({ sampleRatio: 0, trustIncomingTraceparent: trust }, exporter);
    try {
      await unsignedWithTraceparent(service.url);
      const api = await fetch(`${service.url}/v1/jobs`, { headers: { traceparent: CALLER } });
      expect(api.status).toBe(401);
    } finally {
      await service.stop();
    }
    expect(exporter.getFinishedSpans()).toEqual([]);
  }, 60_000);
});

describe("trustIncomingTraceparent false (the default)", () => {
  it("a signed webhook's and an authorised API call's traceparent is ignored: their own traces", async () => {
    const exporter = new AwaitedSpanExporter();
    const service = await served({ sampleRatio: 1 }, exporter);
    try {
      const body = JSON.stringify({ jobId: "signed", state: "running" });
      const headers = { ...signWith(SECRET, body), traceparent: CALLER };
      expect((await sendWebhook(service.url, "acme", body, { headers })).status).toBe(200);
      const api = await fetch(`${service.url}/v1/jobs`, {
        headers: { traceparent: CALLER, authorization: `Bearer ${API_TOKEN}` },
      });
      expect(api.status).toBe(200);
      const spans = await exporter.spansUntil(
        (all) => byName(all, "receive webhook").length === 1 && byName(all, "GET /v1/jobs").length === 1,
      );
      for (const name of ["receive webhook", "GET /v1/jobs"]) {
        const span = only(spans, name);
        expect(span.spanContext().traceId, name).not.toBe(CALLER_TRACE);
        expect(span.parentSpanContext, name).toBeUndefined();
      }
    } finally {
      await service.stop();
    }
  }, 60_000);
});

describe("trustIncomingTraceparent true", () => {
  it("a verified webhook and an authorised API call continue the caller's trace; nothing else does", async () => {
    const exporter = new AwaitedSpanExporter();
    const service = await served({ sampleRatio: 0, trustIncomingTraceparent: true }, exporter);
    try {
      await unsignedWithTraceparent(service.url);
      const body = JSON.stringify({ jobId: "trusted", state: "running" });
      const headers = { ...signWith(SECRET, body), traceparent: CALLER };
      expect((await sendWebhook(service.url, "acme", body, { headers })).status).toBe(200);
      const api = await fetch(`${service.url}/v1/jobs`, {
        headers: { traceparent: CALLER, authorization: `Bearer ${API_TOKEN}` },
      });
      expect(api.status).toBe(200);
      const spans = await exporter.spansUntil(
        (all) => byName(all, "ingest").length === 1 && byName(all, "GET /v1/jobs").length === 1,
      );
      // Sampled by the caller's choice (the ratio is 0), and only the verified request's spans.
      expect(new Set(spans.map((s) => s.spanContext().traceId))).toEqual(new Set([CALLER_TRACE]));
      const intake = only(spans, "receive webhook");
      expect(intake.parentSpanContext?.spanId).toBe("b7ad6b7169203331");
      expect(intake.attributes).toMatchObject({
        "finality.job.id": "trusted",
        "http.response.status_code": 200,
      });
      expect(only(spans, "ingest").parentSpanContext?.spanId).toBe(intake.spanContext().spanId);
      expect(only(spans, "GET /v1/jobs").parentSpanContext?.spanId).toBe("b7ad6b7169203331");
      expect(byName(spans, "verify")).toEqual([]);
    } finally {
      await service.stop();
    }
  }, 60_000);
});
