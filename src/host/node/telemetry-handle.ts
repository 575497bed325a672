// Its own file so telemetry-sdk.ts can name it without importing telemetry.ts, which loads it (no cycle).

/** The running trace SDK: `stop` hands the tracer back (tracing off) and sends what is still queued. */
export interface Telemetry {
  stop(): Promise<void>;
}
