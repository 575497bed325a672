import type { SpanExporter } from "@opentelemetry/sdk-trace";
import type { TelemetryConfig } from "../../config/config-schema.js";
import type { Telemetry } from "./telemetry-handle.js";

/**
 * Tracing for `finality serve` when an `otlpUrl` (or, in tests, an exporter) is given; null
 * otherwise. The SDK (telemetry-sdk.ts) is imported only then: loaded, it holds about 14 MiB of
 * the process, which a service without tracing should not carry (`test/host/lazy-modules.test.ts`).
 */
export async function startTelemetry(
  config: TelemetryConfig,
  options: { exporter?: SpanExporter } = {},
): Promise<Telemetry | null> {
  if (config.otlpUrl === undefined && options.exporter === undefined) return null;
  const { startTelemetrySdk } = await import("./telemetry-sdk.js");
  return startTelemetrySdk(config, options);
}
