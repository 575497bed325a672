import type { MiddlewareHandler } from "hono";
import { FinalityError } from "../core/errors.js";
import type { AppEnv } from "./app-env.js";
import { constantTimeEqual } from "./constant-time-equal.js";

/** Requires `Authorization: Bearer <token>`; the comparison takes the same time whatever was sent. */
export function bearerAuth(token: string): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const header = c.req.header("authorization") ?? "";
    const given = header.startsWith("Bearer ") ? header.slice(7) : "";
    if (!constantTimeEqual(given, token)) {
      throw new FinalityError("unauthorized", "a valid bearer token is required");
    }
    await next();
  };
}
