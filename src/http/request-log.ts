import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./app-env.js";
import type { ServiceMetrics } from "./service-metrics.js";

/** The part of a pino logger the app uses; any logger with this shape will do. */
export interface Logger {
  info(fields: object, message?: string): void;
  warn(fields: object, message?: string): void;
  error(fields: object, message?: string): void;
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };

/**
 * One log line and one counter per request, written after the answer is decided. Routes add
 * fields (provider, outcome, job) through `c.var.log`; never headers, bodies or secrets, and the
 * path without its query string.
 */
export function requestLog(logger: Logger, metrics: ServiceMetrics): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    c.set("log", {});
    await next();
    const status = c.res.status;
    const route = c.get("route") ?? "unmatched";
    metrics.requestFinished(route, c.req.method, status);
    const fields = {
      method: c.req.method,
      path: c.req.path,
      route,
      status,
      ms: Math.round((performance.now() - started) * 100) / 100,
      ...c.get("log"),
    };
    if (status >= 500) logger.error(fields, "request failed");
    else if (status >= 400) logger.warn(fields, "request refused");
    else logger.info(fields, "request");
  };
}
