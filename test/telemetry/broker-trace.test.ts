import { connect, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BrokerServer, startNatsServer } from "../helpers/broker-servers.js";
import { type TempDir, tempDir } from "../helpers/temp-dir.js";
import { sendWebhook } from "../http/helpers/webhooks.js";
import { AwaitedSpanExporter, only, serveWithEffect } from "./helpers.js";

// A broker effect carries the attempt's trace context too: the NATS message's `traceparent`
// header names the `send bus` span, so a consumer's trace continues the completion's.
const STREAM = "TRACE_FINALITY";
const SUBJECT = "trace.finality.settled";

describe("a settled job's NATS effect", () => {
  const exporter = new AwaitedSpanExporter();
  let dir: TempDir;
  let nats: BrokerServer;
  let nc: NatsConnection;
  let served: Awaited<ReturnType<typeof serveWithEffect>>;

  beforeAll(async () => {
    dir = tempDir("finality-broker-trace-");
    nats = await startNatsServer(dir.file("nats"));
    nc = await connect({ servers: nats.url });
    await (await nc.jetstreamManager()).streams.add({ name: STREAM, subjects: [SUBJECT] });
    served = await serveWithEffect({
      receiverUrl: "",
      effects: [{ name: "bus", nats: { servers: nats.url, subject: SUBJECT, stream: STREAM } }],
      telemetry: { sampleRatio: 1 },
      spanExporter: exporter,
    });
  }, 60_000);
  afterAll(async () => {
    await served?.cleanup();
    await nc?.close();
    await nats?.kill();
    dir?.cleanup();
  });

  it("carries the attempt span's traceparent in the message headers", async () => {
    expect(
      (await sendWebhook(served.service.url, "acme", { jobId: "job-1", state: "succeeded" })).status,
    ).toBe(200);
    const consumer = await nc.jetstream().consumers.get(STREAM);
    const message = await consumer.next({ expires: 30_000 });
    expect(message).not.toBeNull();
    const traceparent = message?.headers?.get("traceparent") ?? "";
    const spans = await exporter.spansUntil((all) => all.some((s) => s.name === "send bus"));
    const attempt = only(spans, "send bus").spanContext();
    expect(traceparent).toBe(`00-${attempt.traceId}-${attempt.spanId}-01`);
    expect(only(spans, "receive webhook").spanContext().traceId).toBe(attempt.traceId);
  }, 60_000);
});
