import { FinalityError } from "../core/errors.js";
import { idProblem } from "../core/job-id.js";

const decoder = new TextDecoder("utf-8", { fatal: true });

/** A webhook body as a JSON object; throws `invalid-observation` (400) for anything else. */
export function decodeJsonObject(body: Uint8Array): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(body));
  } catch {
    throw invalidField("(root)", "the body is not UTF-8 JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw invalidField("(root)", "expected a JSON object");
  return value as Record<string, unknown>;
}

// C0 and C1 control characters corrupt logs, headers and terminals.
// biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting them is the point.
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * A job id read from a provider's body, held to the ledger's one rule (core/job-id.ts): an id no
 * URL can carry, or one a store would merge with another, is refused like any malformed body.
 */
export function requireJobId(value: unknown, field: string): string {
  const problem = idProblem(value);
  if (problem !== null) throw invalidField(field, problem);
  return value as string;
}

/** A short text (an event type) read from a provider's body. */
export function requireText(value: unknown, field: string, max: number): string {
  if (typeof value !== "string" || value.length === 0)
    throw invalidField(field, "expected a non-empty string");
  if (value.length > max) throw invalidField(field, `must be at most ${max} characters`);
  if (CONTROL_CHARS.test(value)) throw invalidField(field, "must not contain control characters");
  return value;
}

export function invalidField(field: string, message: string): FinalityError {
  return new FinalityError("invalid-observation", `${field}: ${message}`, { details: { field } });
}
