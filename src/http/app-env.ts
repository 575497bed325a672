/** Per-request values that routes hand to the request log. */
export interface AppEnv {
  Variables: {
    /** Extra fields for the request's log line. */
    log: Record<string, unknown>;
    /** The route pattern, for metrics labels (bounded, unlike paths). */
    route: string;
    /** The request's span (tracing on only), for spans a route starts after an await. */
    traceContext?: unknown;
    /** The request's body under the configured limit: set by the body-limit layer (body-limit.ts). */
    readBody?: () => Promise<Uint8Array>;
  };
}
