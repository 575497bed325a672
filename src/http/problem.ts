import { HTTPException } from "hono/http-exception";
import { ERROR_CODES, type ErrorCode, FinalityError } from "../core/errors.js";
import { codeForStatus, PROBLEM_STATUS } from "./problem-status.js";

/**
 * The one place that maps errors to HTTP. Every error answer is `application/problem+json`
 * (RFC 9457) with a stable `type` per FinalityError code; clients switch on `type` (or `code`),
 * never on `title` or `detail`, which are for people.
 */

const PROBLEM_CONTENT_TYPE = "application/problem+json";

/** URNs rather than URLs: stable names that do not pretend to be pages. Listed in README ("Errors"). */
export function problemType(code: ErrorCode): string {
  return `urn:finality:problem:${code}`;
}

const TITLES: Record<ErrorCode, string> = {
  "invalid-observation": "Invalid observation",
  "invalid-request": "Invalid request",
  "payload-too-large": "Payload too large",
  "unknown-provider": "Unknown provider",
  "not-found": "Not found",
  "signature-invalid": "Invalid webhook signature",
  unauthorized: "Unauthorized",
  forbidden: "Forbidden",
  "method-not-allowed": "Method not allowed",
  conflict: "Conflict",
  "stale-generation": "Stale generation",
  "version-conflict": "Version conflict",
  "invalid-config": "Invalid configuration",
  "effect-failed": "Effect failed",
  "store-unavailable": "Store unavailable",
  "shutting-down": "Shutting down",
  overloaded: "Overloaded",
  "wait-timeout": "Wait timed out",
  internal: "Internal error",
};

interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  retryable: boolean;
  /** Extension members that help the caller act: the bad field, the signature failure, ... */
  [extension: string]: unknown;
}

/** Detail keys safe to show a caller; anything else stays in the logs. */
const PUBLIC_DETAILS = ["field", "reason", "provider", "id", "allow", "tombstone", "parked"] as const;

/** Turns any thrown value into a problem. `exposed` is false when the detail was hidden (a 5xx bug). */
export function toProblem(error: unknown): { problem: Problem; exposed: boolean } {
  if (error instanceof FinalityError) {
    const problem = baseProblem(error.code, error.message);
    for (const key of PUBLIC_DETAILS) if (error.details[key] !== undefined) problem[key] = error.details[key];
    if (error.retryAfterMs !== undefined) problem.retryAfterSeconds = Math.ceil(error.retryAfterMs / 1000);
    return { problem, exposed: true };
  }
  if (error instanceof HTTPException) {
    const code = codeForStatus(error.status);
    return { problem: baseProblem(code, error.message || TITLES[code]), exposed: true };
  }
  return {
    problem: baseProblem("internal", "an unexpected error occurred; it has been logged"),
    exposed: false,
  };
}

export function problemResponse(problem: Problem): Response {
  return new Response(JSON.stringify(problem), { status: problem.status, headers: problemHeaders(problem) });
}

/** Content type plus the headers some problems call for (Allow, Retry-After, WWW-Authenticate). */
export function problemHeaders(problem: Problem): Record<string, string> {
  const headers: Record<string, string> = { "content-type": PROBLEM_CONTENT_TYPE };
  if (typeof problem.retryAfterSeconds === "number")
    headers["retry-after"] = String(problem.retryAfterSeconds);
  if (typeof problem.allow === "string") headers.allow = problem.allow;
  if (problem.code === "unauthorized") headers["www-authenticate"] = 'Bearer realm="finality"';
  return headers;
}

function baseProblem(code: ErrorCode, detail: string): Problem {
  const { retryable } = ERROR_CODES[code];
  return {
    type: problemType(code),
    title: TITLES[code],
    status: PROBLEM_STATUS[code],
    detail,
    code,
    retryable,
  };
}
