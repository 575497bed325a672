import type { MiddlewareHandler } from "hono";
import { FinalityError } from "../core/errors.js";
import type { AppEnv } from "./app-env.js";
import { hostNameOf, isLoopbackHost } from "./loopback.js";

/**
 * Refuses on `/v1` what a web page in a browser could send there: a request from another site
 * (`Sec-Fetch-Site: cross-site` or `same-site`, or an `Origin` that is not this host) — a "simple"
 * POST needs no preflight, so without this a page could enqueue runs or settle jobs through the
 * user's browser. Without an API token (loopback only) the `Host` must be a loopback name too, so
 * that a DNS-rebound name cannot reach the API. Clients that are not browsers send none of these
 * headers and are not affected.
 */
export function crossSiteGuard(options: { loopbackOnly: boolean }): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    // In process (app.request, a Worker's fetch) there may be no Host header: the URL has it.
    const host = c.req.header("host") ?? new URL(c.req.url).host;
    if (options.loopbackOnly && !isLoopbackHost(hostNameOf(host)))
      throw forbidden(`the API without a token answers loopback host names only, not "${host}"`);
    const site = c.req.header("sec-fetch-site");
    if (site === "cross-site" || site === "same-site")
      throw forbidden("requests from another site are refused");
    const origin = c.req.header("origin");
    if (origin !== undefined && hostOf(origin) !== host)
      throw forbidden("requests from another origin are refused");
    await next();
  };
}

function hostOf(origin: string): string | null {
  try {
    return new URL(origin).host;
  } catch {
    return null;
  }
}

function forbidden(message: string): FinalityError {
  return new FinalityError("forbidden", message);
}
