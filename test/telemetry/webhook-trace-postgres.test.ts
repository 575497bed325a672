import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dropSchema, POSTGRES_TEST_URL, postgresSuite, uniqueSchemaName } from "../helpers/postgres.js";
import { sendWebhook } from "../http/helpers/webhooks.js";
import { AwaitedSpanExporter, byName, only, serveWithEffect, startReceiver } from "./helpers.js";

// On PostgreSQL a settling webhook whose effects are all outbox rows enqueues them inside its one
// statement (StoreTx.ingestAtOnce), its traceparent with them: the delivery must still continue
// the transaction that settled the job, as on SQLite (webhook-trace.test.ts).
const { admin } = await postgresSuite("a webhook's trace on PostgreSQL");

describe("a webhook that settles a job with an HTTP effect, on PostgreSQL", () => {
  const exporter = new AwaitedSpanExporter();
  const schema = uniqueSchemaName();
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let served: Awaited<ReturnType<typeof serveWithEffect>>;

  beforeAll(async () => {
    receiver = await startReceiver([200]);
    served = await serveWithEffect({
      receiverUrl: receiver.url,
      store: { postgres: POSTGRES_TEST_URL, schema },
      telemetry: { serviceName: "finality-trace-test", sampleRatio: 1 },
      spanExporter: exporter,
    });
  }, 60_000);
  afterAll(async () => {
    await served?.cleanup();
    await receiver?.close();
    await dropSchema(admin, schema);
  });

  it("delivers the effect as a child of the ingest that enqueued it", async () => {
    const sent = await sendWebhook(served.service.url, "acme", { jobId: "job-1", state: "succeeded" });
    expect(sent.status).toBe(200);
    const [headers] = await receiver.received(1);
    const spans = await exporter.spansUntil(
      (all) => byName(all, "send notify").filter((s) => s.attributes["finality.effect.outcome"]).length === 1,
    );
    const ingest = only(spans, "ingest");
    expect(ingest.attributes).toMatchObject({ "finality.applied": true, "finality.effects.enqueued": 1 });
    const attempt = only(spans, "send notify");
    expect(attempt.parentSpanContext?.spanId).toBe(ingest.spanContext().spanId);
    expect(headers?.traceparent).toBe(
      `00-${ingest.spanContext().traceId}-${attempt.spanContext().spanId}-01`,
    );
  }, 60_000);
});
