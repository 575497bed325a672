import type { Context, MiddlewareHandler } from "hono";
import { captureContext, contextFromTraceParent, inSpan, SpanKind, tracingOn } from "../engine/tracing.js";
import type { AppEnv } from "./app-env.js";

/**
 * A server span per API and worker API request, continuing the caller's W3C `traceparent` when
 * `trustedCaller` says so: a client's trace runs on into the registration, a worker's into its
 * callback's transaction. Otherwise the header is ignored, so that no caller can force spans to
 * be kept (or put them in its own trace). Named by route (bounded), not by path. Nothing when
 * tracing is off.
 */
export function traceApiRequests(trustedCaller: (c: Context<AppEnv>) => boolean): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (!tracingOn()) return next();
    const method = c.req.method;
    const header = c.req.header("traceparent");
    const parent = header !== undefined && trustedCaller(c) ? contextFromTraceParent(header) : undefined;
    await inSpan(
      method,
      {
        kind: SpanKind.SERVER,
        ...(parent ? { parent } : {}),
        attributes: { "http.request.method": method, "url.path": c.req.path },
      },
      async (span) => {
        c.set("traceContext", captureContext());
        await next();
        const route = c.var.route;
        if (route !== undefined) {
          span?.updateName(`${method} ${route}`);
          span?.setAttribute("http.route", route);
        }
        span?.setAttribute("http.response.status_code", c.res.status);
      },
    );
  };
}
