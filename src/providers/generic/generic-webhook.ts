import { storableDeliveryId } from "../../core/bounded-value.js";
import { isTimestampInBounds, timestampOutOfBounds } from "../../core/bounds.js";
import { FinalityError } from "../../core/errors.js";
import { idProblem } from "../../core/job-id.js";
import type { Observation } from "../../core/model.js";
import { LIMITS } from "../../core/validation.js";

/**
 * The `generic` provider's webhook body:
 * `{"jobId": string, "state": string, "seq"?: int, "updateTime"?: RFC3339, "kind"?: string,
 *   "result"?: any, "error"?: any}`. Other keys are ignored, so senders may add their own.
 *
 * Checked by hand rather than with zod: it runs on every webhook, and for a body this small the
 * schema walk cost more than the HMAC. The rules are those of `observationSchema`.
 */
export function parseGenericWebhook(
  body: Uint8Array,
  provider: string,
  deliveryId: string,
  /**
   * `refuse` (a webhook): an `updateTime` outside 2000–2200 is a typed 400 its sender sees.
   * `keep` (a poll answer, which cannot be refused): it is kept, and ingest drops or cuts it.
   */
  outOfRangeTimes: "refuse" | "keep" = "refuse",
): Observation {
  const value = parseJson(body);
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw invalid("(root)", "expected a JSON object");
  const fields = value as Record<string, unknown>;
  const observation: Observation = {
    provider,
    id: jobId(fields.jobId),
    state: text(fields.state, "state", LIMITS.stateLength),
    source: "webhook",
    // Any id the signature check let through: an overlong one is keyed by its hash when stored.
    deliveryId: storableDeliveryId(deliveryId),
  };
  observation.rawState = observation.state;
  if (fields.seq !== undefined && fields.seq !== null) observation.seq = seq(fields.seq);
  if (fields.updateTime !== undefined && fields.updateTime !== null)
    observation.updateTime = rfc3339(fields.updateTime, outOfRangeTimes);
  if (fields.kind !== undefined && fields.kind !== null)
    observation.kind = text(fields.kind, "kind", LIMITS.kindLength);
  // An oversized, too deep or unstorable result or error is not refused: the ingest path keeps
  // the state and stores a marked stand-in (core/bounded-value.ts). Refusing it here cost the
  // job its completion for good (the sender's retries and every poll of the answer were refused).
  if (fields.result !== undefined) observation.result = fields.result;
  if (fields.error !== undefined) observation.error = fields.error;
  return observation;
}

const decoder = new TextDecoder("utf-8", { fatal: true });

function parseJson(body: Uint8Array): unknown {
  let textBody: string;
  try {
    textBody = decoder.decode(body);
  } catch {
    throw invalid("(root)", "the body is not valid UTF-8");
  }
  try {
    return JSON.parse(textBody);
  } catch {
    throw invalid("(root)", "the body is not valid JSON");
  }
}

// C0 and C1 control characters corrupt logs, headers and terminals.
// biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting them is the point.
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;

function text(value: unknown, field: string, max: number): string {
  if (typeof value !== "string") throw invalid(field, "expected a string");
  if (value.length === 0) throw invalid(field, "must not be empty");
  if (value.length > max) throw invalid(field, `must be at most ${max} characters`);
  if (CONTROL_CHARS.test(value)) throw invalid(field, "must not contain control characters");
  return value;
}

/** The job id under the ledger's one rule (core/job-id.ts). */
function jobId(value: unknown): string {
  const problem = idProblem(value);
  if (problem !== null) throw invalid("jobId", problem);
  return value as string;
}

function seq(value: unknown): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0)
    throw invalid("seq", "expected a non-negative integer");
  return value;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

function rfc3339(value: unknown, outOfRange: "refuse" | "keep"): number {
  if (typeof value !== "string" || !RFC3339.test(value))
    throw invalid("updateTime", "expected an RFC 3339 date-time such as 2026-01-01T12:00:00Z");
  const millis = Date.parse(value);
  if (!Number.isFinite(millis)) throw invalid("updateTime", "is not a valid date-time");
  if (outOfRange === "refuse" && !isTimestampInBounds(millis))
    throw timestampOutOfBounds("updateTime", millis);
  return millis;
}

function invalid(field: string, message: string): FinalityError {
  return new FinalityError("invalid-observation", `${field}: ${message}`, { details: { field } });
}
