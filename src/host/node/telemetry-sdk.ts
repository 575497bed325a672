import { context } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  BatchSpanProcessor,
  ParentBasedSampler,
  SimpleSpanProcessor,
  type SpanExporter,
  StackContextManager,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import type { TelemetryConfig } from "../../config/config-schema.js";
import { useTracer } from "../../engine/tracing.js";

import type { Telemetry } from "./telemetry-handle.js";

let contextManagerSet = false;

/**
 * Starts the OpenTelemetry SDK for `finality serve`, the one place it is loaded: a tracer
 * provider with a parent-based ratio sampler (a caller's `traceparent` keeps its own decision),
 * spans batched to the OTLP/HTTP exporter, and async-hooks context so a span stays active across
 * awaits. `exporter` replaces the OTLP one (tests: an in-memory exporter, exported span by span).
 */
export function startTelemetrySdk(config: TelemetryConfig, options: { exporter?: SpanExporter }): Telemetry {
  if (!contextManagerSet) {
    // Global by the API's design, and set once per process: a second serve in one process (tests)
    // shares it.
    context.setGlobalContextManager(new StackContextManager().enable());
    contextManagerSet = true;
  }
  const processor = options.exporter
    ? new SimpleSpanProcessor({ exporter: options.exporter })
    : new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: config.otlpUrl as string }) });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": config.serviceName }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.sampleRatio) }),
    spanProcessors: [processor],
  });
  useTracer(provider.getTracer("finality"));
  return {
    async stop() {
      useTracer(null);
      await provider.shutdown();
    },
  };
}
