import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/parse-config.js";
import { sendWebhook } from "../http/helpers/webhooks.js";
import { serveWithEffect, startReceiver } from "./helpers.js";

// The OTLP/HTTP exporter, for real, into a collector written here: it decodes the JSON body
// (the exporter's default encoding) far enough to read span names and the service name.

interface OtlpBody {
  resourceSpans: {
    resource: { attributes: { key: string; value: { stringValue?: string } }[] };
    scopeSpans: { spans: { name: string; traceId: string }[] }[];
  }[];
}

async function startCollector(): Promise<{
  origin: string;
  posts: { path: string; type: string; body: OtlpBody }[];
  close(): Promise<void>;
}> {
  const posts: { path: string; type: string; body: OtlpBody }[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      posts.push({
        path: request.url ?? "",
        type: request.headers["content-type"] ?? "",
        body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as OtlpBody,
      });
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    posts,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const spanNames = (body: OtlpBody) =>
  body.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans.map((x) => x.name)));
const serviceNames = (body: OtlpBody) =>
  body.resourceSpans.map(
    (r) => r.resource.attributes.find((a) => a.key === "service.name")?.value.stringValue,
  );

describe("OTLP/HTTP export", () => {
  it.each([
    [
      "telemetry.otlpUrl in the file",
      (origin: string) => ({ telemetry: { otlpUrl: `${origin}/v1/traces`, serviceName: "otlp-file" } }),
      "otlp-file",
    ],
    [
      "OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_SERVICE_NAME",
      (origin: string) => ({
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: `${origin}/`, OTEL_SERVICE_NAME: "otlp-env" },
      }),
      "otlp-env",
    ],
  ])(
    "posts the completion's spans (%s)",
    async (_how, settings, service) => {
      const collector = await startCollector();
      const receiver = await startReceiver();
      const served = await serveWithEffect({ receiverUrl: receiver.url, ...settings(collector.origin) });
      try {
        await sendWebhook(served.service.url, "acme", { jobId: "job-otlp", state: "succeeded" });
        await receiver.received(1);
      } finally {
        // Stopping flushes the batch: the collector has every span once stop resolves.
        await served.cleanup();
        await receiver.close();
        await collector.close();
      }
      expect(collector.posts.map((p) => [p.path, p.type])).toContainEqual(["/v1/traces", "application/json"]);
      const names = collector.posts.flatMap((p) => spanNames(p.body));
      expect(names).toEqual(
        expect.arrayContaining(["receive webhook", "verify", "ingest", "answer", "send notify"]),
      );
      expect(new Set(collector.posts.flatMap((p) => serviceNames(p.body)))).toEqual(new Set([service]));
      const traceIds = collector.posts.flatMap((p) =>
        p.body.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans.map((x) => x.traceId))),
      );
      expect(new Set(traceIds).size).toBe(1);
    },
    60_000,
  );
});

describe("OTEL_* variables", () => {
  const load = (env: Record<string, string>) => parseConfig({}, env, {}, { resolveSecrets: true }).telemetry;

  it("OTEL_TRACES_SAMPLER_ARG sets sampleRatio; OTEL_EXPORTER_OTLP_TRACES_ENDPOINT wins over the generic endpoint", () => {
    expect(
      load({
        OTEL_TRACES_SAMPLER_ARG: "0.25",
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://traces:4318/custom",
      }),
    ).toEqual({
      otlpUrl: "http://traces:4318/custom",
      serviceName: "finality",
      sampleRatio: 0.25,
      trustIncomingTraceparent: false,
    });
    expect(load({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" }).otlpUrl).toBe(
      "http://collector:4318/v1/traces",
    );
  });

  it("off by default; OTEL_SDK_DISABLED=true turns it off; a bad ratio names the variable", () => {
    expect(load({})).toEqual({ serviceName: "finality", sampleRatio: 1, trustIncomingTraceparent: false });
    expect(
      load({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_SDK_DISABLED: "true" }).otlpUrl,
    ).toBeUndefined();
    const refused = (() => {
      try {
        load({ OTEL_TRACES_SAMPLER_ARG: "2" });
      } catch (error) {
        return (error as Error).message;
      }
      return "accepted";
    })();
    expect(refused).toContain("OTEL_TRACES_SAMPLER_ARG");
    expect(refused).toContain("telemetry.sampleRatio");
  });
});
