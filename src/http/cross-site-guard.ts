import type { MiddlewareHandler } from "hono";
import { FinalityError } from "../core/errors.js";
import type { AppEnv } from "./app-env.js";
import { hostNameOf, isLoopbackHost } from "./loopback.js";

/**
 * Refuses what a web page in a browser could send to this service: a request from another site
 * (`Sec-Fetch-Site: cross-site` or `same-site`, or an `Origin` that is not this host) — a "simple"
 * POST needs no preflight, so without this a page could enqueue runs, settle jobs or retry
 * effects through the user's browser. Without an API token (loopback only) the `Host` must be a
 * loopback name too, so that a DNS-rebound name (a page of evil.example whose name now points at
 * 127.0.0.1 is same-origin with itself, and sends `Host: evil.example`) cannot read or post
 * anything. With a token the host name is not checked: a public service has its own name, and a
 * rebound page has neither the token nor the session cookie (bound to the real name).
 *
 * Clients that are not browsers send no `Origin` and no `Sec-Fetch-*` and are not affected.
 *
 * `allowNavigation` (the dashboard's pages): a top-level GET or HEAD navigation from another site
 * (a link in an alert, `Sec-Fetch-Mode: navigate` + `Sec-Fetch-Dest: document`) is let through —
 * it changes nothing and the other site cannot read the page it opens. A frame
 * (`Sec-Fetch-Dest: iframe`) is not a top-level navigation and stays refused (no clickjacking).
 */
export function crossSiteGuard(options: {
  loopbackOnly: boolean;
  allowNavigation?: boolean;
}): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const refusal = crossSiteRefusal(
      {
        method: c.req.method,
        // In process (app.request, a Worker's fetch) there may be no Host header: the URL has it.
        host: c.req.header("host") ?? new URL(c.req.url).host,
        forwardedHost: c.req.header("x-forwarded-host"),
        origin: c.req.header("origin"),
        fetchSite: c.req.header("sec-fetch-site"),
        fetchMode: c.req.header("sec-fetch-mode"),
        fetchDest: c.req.header("sec-fetch-dest"),
      },
      options,
    );
    if (refusal !== null) {
      // Counted under its own bounded route label: refused before any route was matched.
      c.set("route", "cross-site-guard");
      throw new FinalityError("forbidden", refusal);
    }
    await next();
  };
}

interface RequestOrigin {
  method: string;
  host: string;
  forwardedHost?: string | undefined;
  origin?: string | undefined;
  fetchSite?: string | undefined;
  fetchMode?: string | undefined;
  fetchDest?: string | undefined;
}

/** Why the request is refused, or null when it may pass. Pure. */
export function crossSiteRefusal(
  request: RequestOrigin,
  options: { loopbackOnly: boolean; allowNavigation?: boolean },
): string | null {
  const { host } = request;
  if (options.loopbackOnly) {
    // A proxy on this machine may have rewritten Host to a loopback name: the name the browser
    // used is then in X-Forwarded-Host, and a rebound name there is refused the same way.
    for (const name of [host, ...forwardedHostsOf(request)])
      if (!isLoopbackHost(hostNameOf(name)))
        return `without an API token this service answers loopback host names only, not "${name}"`;
  }
  if (request.origin !== undefined) {
    const from = hostOf(request.origin);
    // Behind a proxy that rewrites Host, the browser's host is in X-Forwarded-Host. A page of
    // another site cannot set that header (it is not CORS-safelisted, so it needs a preflight
    // this service never answers); a rebound page can, but the Host check above is what stops it.
    // Compared as the URL parser writes them (lowercase, "127.0.0.1." as "127.0.0.1"), as the
    // browser wrote the Origin.
    const hosts = [host, ...forwardedHostsOf(request)].map((h) => hostOf(`http://${h}`));
    // An origin without a host ("null", "file://") is nobody's: never a match, even for an empty Host.
    if (!from || !hosts.includes(from)) return "requests from another origin are refused";
  }
  const site = request.fetchSite;
  if (site === "cross-site" || site === "same-site") {
    const navigation =
      (request.method === "GET" || request.method === "HEAD") &&
      request.fetchMode === "navigate" &&
      request.fetchDest === "document";
    if (!(options.allowNavigation && navigation)) return "requests from another site are refused";
  }
  return null;
}

/**
 * Paths the guard does not cover. Webhooks come from providers' servers under any Host name and
 * are authenticated by their signatures. `/healthz` and `/readyz` answer a load balancer or a
 * proxy, which may probe under the public name even on a loopback-only service, and they carry
 * nothing: a fixed status, or a fixed problem when the store is down.
 */
export function isUnguardedPath(path: string): boolean {
  return path.startsWith("/webhooks/") || path === "/healthz" || path === "/readyz";
}

/** The names in X-Forwarded-Host (a proxy chain may list several, comma-separated). */
function forwardedHostsOf(request: RequestOrigin): string[] {
  return request.forwardedHost?.split(",").map((h) => h.trim()) ?? [];
}

function hostOf(origin: string): string | null {
  try {
    return new URL(origin).host;
  } catch {
    return null;
  }
}
