import type { Context, MiddlewareHandler } from "hono";
import { FinalityError } from "../core/errors.js";
import type { AppEnv } from "./app-env.js";
import { readBody } from "./read-body.js";

/**
 * The one body-limit layer of the app: registered once (app/create-app.ts) with
 * `server.bodyLimitBytes`, it gives each request its reader, and every route that reads a body
 * calls `requestBody(c)`. The limit used to be handed by hand to each route file; a route added
 * without it had none. (The Node webhook fast path and the Worker's front read the body before
 * the app and take the limit from the same key: host/node/serve.ts, cloudflare/index.ts.)
 */
export function bodyLimit(limitBytes: number): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    c.set("readBody", () => readBody(c.req.raw, limitBytes));
    await next();
  };
}

/** The request's body, at most the configured limit (413 past it). */
export function requestBody(c: Context<AppEnv>): Promise<Uint8Array> {
  const read = c.var.readBody;
  if (read === undefined)
    throw new FinalityError("internal", "no body-limit layer: register bodyLimit() before the routes");
  return read();
}
