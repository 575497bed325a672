import type { MiddlewareHandler } from "hono";
import { FinalityError } from "../core/errors.js";
import type { AppEnv } from "./app-env.js";
import { constantTimeEqual } from "./constant-time-equal.js";

/**
 * The token of an `Authorization: Bearer <token>` header, or "" (the scheme name is
 * case-insensitive, RFC 9110 §11.1, and may be followed by more than one space).
 */
export function bearerTokenOf(header: string | undefined): string {
  const match = /^bearer +(\S+) *$/i.exec(header ?? "");
  return match?.[1] ?? "";
}

/** Requires `Authorization: Bearer <token>`; the comparison takes the same time whatever was sent. */
export function bearerAuth(token: string): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const given = bearerTokenOf(c.req.header("authorization"));
    if (!constantTimeEqual(given, token)) {
      throw new FinalityError("unauthorized", "a valid bearer token is required");
    }
    await next();
  };
}
