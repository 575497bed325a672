import type { MiddlewareHandler } from "hono";
import { captureContext, contextFromTraceParent, inSpan, SpanKind, tracingOn } from "../engine/tracing.js";
import type { AppEnv } from "./app-env.js";

/**
 * A server span per API and worker API request, continuing the caller's W3C `traceparent`
 * when it sends one: a client's trace runs on into the registration, a worker's into its
 * callback's transaction. Named by route (bounded), not by path. Nothing when tracing is off.
 */
export const traceApiRequests: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (!tracingOn()) return next();
  const method = c.req.method;
  const parent = contextFromTraceParent(c.req.header("traceparent"));
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
