import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { SpanKind } from "@opentelemetry/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postJson } from "../http/helpers/webhooks.js";
import { AwaitedSpanExporter, byName, only, serveWithEffect, startReceiver } from "./helpers.js";

// A job no webhook settles: the reconciler's poll finds it succeeded. The poll's trace holds the
// provider call (with the status API's HTTP status), the ingest transaction, and the effect's
// delivery attempt, linked to that transaction.

describe("a reconcile poll that settles a job", () => {
  const exporter = new AwaitedSpanExporter();
  let statusApi: Server;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let served: Awaited<ReturnType<typeof serveWithEffect>>;

  beforeAll(async () => {
    statusApi = createServer((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ jobId: "job-polled", state: "succeeded" }));
    });
    statusApi.listen(0, "127.0.0.1");
    await once(statusApi, "listening");
    const { port } = statusApi.address() as AddressInfo;
    receiver = await startReceiver();
    served = await serveWithEffect({
      receiverUrl: receiver.url,
      telemetry: { sampleRatio: 1 },
      spanExporter: exporter,
      acme: {
        poll: { url: `http://127.0.0.1:${port}/status/{id}` },
        reconcile: { graceSeconds: 0.05, minIntervalSeconds: 0.05, maxIntervalSeconds: 1 },
      },
    });
  }, 60_000);
  afterAll(async () => {
    await served?.cleanup();
    await receiver?.close();
    await new Promise((resolve) => statusApi?.close(resolve));
  });

  it("makes one trace: reconcile, poll (HTTP 200), ingest, and the delivery attempt", async () => {
    expect(
      (await postJson(`${served.service.url}/v1/jobs`, { provider: "acme", id: "job-polled" })).status,
    ).toBe(201);
    const [headers] = await receiver.received(1);
    const spans = await exporter.spansUntil((all) =>
      byName(all, "send notify").some((s) => s.attributes["finality.effect.outcome"] === "delivered"),
    );
    const settling = spans.filter(
      (s) => s.name === "ingest" && s.attributes["finality.job.state"] === "succeeded",
    );
    expect(settling).toHaveLength(1);
    const ingest = settling[0];
    const traceId = ingest?.spanContext().traceId;
    const trace = spans.filter((s) => s.spanContext().traceId === traceId);
    const reconcile = only(trace, "reconcile acme");
    const poll = only(trace, "poll acme");
    expect(reconcile.parentSpanContext).toBeUndefined();
    expect(poll.kind).toBe(SpanKind.CLIENT);
    expect(poll.parentSpanContext?.spanId).toBe(reconcile.spanContext().spanId);
    expect(poll.attributes).toMatchObject({
      "http.response.status_code": 200,
      "finality.poll.result": "observed",
    });
    expect(ingest?.parentSpanContext?.spanId).toBe(reconcile.spanContext().spanId);
    expect(ingest?.attributes["finality.source"]).toBe("reconcile");
    const send = only(trace, "send notify");
    expect(send.parentSpanContext?.spanId).toBe(ingest?.spanContext().spanId);
    expect(headers?.traceparent).toBe(`00-${traceId}-${send.spanContext().spanId}-01`);
  }, 60_000);
});
