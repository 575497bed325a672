import * as z from "zod";
import { FinalityError } from "./errors.js";

/**
 * The one rule for a job id (and an intent key, which travels the same way), wherever one comes
 * in: the library, the HTTP API, a provider's webhook body, the CLI, a Worker, and each store.
 *
 * An id must be one the ledger can keep apart from every other and hand back through a URL:
 * - non-empty and at most `JOB_ID_MAX_LENGTH` characters;
 * - no control characters (they corrupt logs, headers and terminals);
 * - well-formed Unicode: PostgreSQL (and any UTF-8 encoder) turns half of a surrogate pair into
 *   U+FFFD, so `"x\ud800"` and `"x\udc00"` became one row, and one job's failure a conflicting
 *   terminal of the other; `encodeURIComponent` throws on it, so no client can address it;
 * - not `.` or `..`: URL parsers drop such a path segment, so `GET /v1/jobs/p/..` never reaches
 *   the job (registration answered 201, every later call 404 or 405).
 */
export const JOB_ID_MAX_LENGTH = 512;

// C0 and C1 control characters (including DEL).
// biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting them is the point.
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;

/** Why `value` cannot be an id of at most `maxLength` characters; null when it can. */
export function idProblem(value: unknown, maxLength: number = JOB_ID_MAX_LENGTH): string | null {
  if (typeof value !== "string") return "expected a string";
  if (value.length === 0) return "must not be empty";
  if (value.length > maxLength) return `must be at most ${maxLength} characters`;
  if (CONTROL_CHARS.test(value)) return "must not contain control characters";
  if (!value.isWellFormed()) return "must be well-formed Unicode (it holds half of a surrogate pair)";
  if (value === "." || value === "..") return `must not be "${value}": no URL can carry it`;
  return null;
}

/** True when `value` passes the rule (see `idProblem`). */
export function isValidId(value: unknown, maxLength: number = JOB_ID_MAX_LENGTH): value is string {
  return idProblem(value, maxLength) === null;
}

/** The rule as a zod schema, for request bodies and the OpenAPI document. */
export const idSchema = (maxLength: number = JOB_ID_MAX_LENGTH) =>
  z
    .string()
    // min and max also carry the bounds into /openapi.json; the refinement holds the rest.
    .min(1, "must not be empty")
    .max(maxLength, `must be at most ${maxLength} characters`)
    .superRefine((value, ctx) => {
      const problem = idProblem(value, maxLength);
      if (problem !== null) ctx.addIssue({ code: "custom", message: problem });
    });

/**
 * The store's own check, below every edge: a job key no edge should have let through is refused
 * (400) rather than stored under another key.
 */
export function checkStorableJobKey(key: { provider: string; id: string }): void {
  const problem = idProblem(key.id);
  if (problem === null) return;
  throw new FinalityError("invalid-request", `id: ${problem}`, {
    details: { field: "id", provider: key.provider },
  });
}
