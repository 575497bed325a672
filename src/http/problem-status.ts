import type { ErrorCode } from "../core/errors.js";

/**
 * The HTTP status each error code answers with. Kept in http/ rather than on the error: core says
 * what went wrong and whether to retry, the HTTP edge says how that reads on the wire.
 */
export const PROBLEM_STATUS: Readonly<Record<ErrorCode, number>> = {
  "invalid-observation": 400,
  "invalid-request": 400,
  "payload-too-large": 413,
  "unknown-provider": 404,
  "not-found": 404,
  "signature-invalid": 401,
  unauthorized: 401,
  forbidden: 403,
  "method-not-allowed": 405,
  conflict: 409,
  "stale-generation": 409,
  "version-conflict": 409,
  "invalid-config": 500,
  "effect-failed": 500,
  "store-unavailable": 503,
  "shutting-down": 503,
  overloaded: 503,
  // The library's waitFor only: the HTTP wait answers 200 with the unsettled job instead.
  "wait-timeout": 504,
  internal: 500,
};

/** The code for a status Hono raised itself (an HTTPException: a bad route, a body too large, ...). */
export function codeForStatus(status: number): ErrorCode {
  switch (status) {
    case 400:
      return "invalid-request";
    case 401:
      return "unauthorized";
    case 404:
      return "not-found";
    case 405:
      return "method-not-allowed";
    case 409:
      return "conflict";
    case 413:
      return "payload-too-large";
    case 503:
      return "store-unavailable";
    default:
      return status >= 500 ? "internal" : "invalid-request";
  }
}
