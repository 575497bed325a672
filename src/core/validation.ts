import * as z from "zod";
import { isTimestampInBounds, TIMESTAMP_BOUNDS } from "./bounds.js";
import { didYouMean } from "./did-you-mean.js";
import { FinalityError } from "./errors.js";
import { idSchema, JOB_ID_MAX_LENGTH } from "./job-id.js";
import type { Observation } from "./model.js";
import type { Registration } from "./reducer.js";
import { SOURCES } from "./states.js";

/** Limits on what callers may store; larger input is refused before it reaches the store. */
export const LIMITS = {
  providerNameLength: 64,
  jobIdLength: JOB_ID_MAX_LENGTH,
  kindLength: 128,
  intentKeyLength: 200,
  stateLength: 128,
  deliveryIdLength: 256,
  metadataBytes: 64 * 1024,
  resultBytes: 512 * 1024,
  /** Deeper JSON overflows the stack of JSON.stringify when it is stored: refused up front. */
  jsonDepth: 64,
} as const;

// C0 and C1 control characters (including DEL): they corrupt logs, headers and terminals.
// biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting them is the point.
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;

/** A job id: the one rule of core/job-id.ts. */
const jobId = idSchema(JOB_ID_MAX_LENGTH);

const text = (max: number) =>
  z
    .string()
    .min(1, "must not be empty")
    .max(max, `must be at most ${max} characters`)
    .refine((value) => !CONTROL_CHARS.test(value), "must not contain control characters");

/**
 * A whole number in a query string (`?limit=50`), from `min` to `max`. The description carries
 * the bounds into /openapi.json, which shows the string the query holds, not the number.
 */
export const queryInteger = (min: number, max: number) =>
  z
    .string()
    .regex(/^[0-9]+$/, "must be a whole number")
    .transform(Number)
    .pipe(z.number().int().min(min).max(max))
    .describe(`a whole number from ${min} to ${max}`);

export const providerNameSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]*$/, "must be lowercase letters, digits, '-' or '_'")
  .max(LIMITS.providerNameLength);

const jsonValue = (maxBytes: number, what: string) =>
  z
    .unknown()
    .optional()
    .superRefine((value, ctx) => {
      if (value === undefined) return;
      if (exceedsDepth(value, LIMITS.jsonDepth)) {
        ctx.addIssue({ code: "custom", message: `${what} is nested deeper than ${LIMITS.jsonDepth} levels` });
        return;
      }
      const size = jsonSize(value);
      if (size === null) ctx.addIssue({ code: "custom", message: `${what} must be JSON-serialisable` });
      else if (size > maxBytes)
        ctx.addIssue({
          code: "custom",
          message: `${what} is ${size} bytes; the limit is ${maxBytes}`,
          params: { tooLarge: true },
        });
    });

const isoOrEpoch = z
  .union([
    z.number().finite().nonnegative(),
    z.iso.datetime({ offset: true }).transform((value) => Date.parse(value)),
  ])
  .refine(isTimestampInBounds, `must be within ${TIMESTAMP_BOUNDS.text}`);

/**
 * A result or error: anything. What cannot be stored whole (too large, too deep, not JSON) is
 * not refused but cut by the ingest path (core/bounded-value.ts), so that it never costs the
 * state; the HTTP body limit, earlier, is what bounds a request.
 */
const outcomeValue = z.unknown().optional();

const observationSchema = z.object({
  provider: providerNameSchema,
  id: jobId,
  state: text(LIMITS.stateLength),
  source: z.enum(SOURCES),
  rawState: text(LIMITS.stateLength).optional(),
  seq: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).optional(),
  updateTime: isoOrEpoch.optional(),
  deliveryId: text(LIMITS.deliveryIdLength).optional(),
  kind: text(LIMITS.kindLength).optional(),
  result: outcomeValue,
  error: outcomeValue,
});

/**
 * What a caller may say about a job through the API (`source: "api"`): the provider and id come
 * from the path, so the body holds only the observation; unknown keys are refused.
 */
export const apiObservationSchema = observationSchema
  .pick({ state: true, rawState: true, seq: true, updateTime: true, kind: true, result: true, error: true })
  .strict();

/** Idempotency keys of API observations share the provider's delivery ids, under this prefix. */
export const API_DELIVERY_PREFIX = "api:";

/** Strict, like API observations: `"kidn"` for `"kind"` is refused rather than dropped. */
export const registrationSchema = z.strictObject({
  provider: providerNameSchema,
  id: jobId,
  kind: text(LIMITS.kindLength).optional(),
  metadata: jsonValue(LIMITS.metadataBytes, "metadata"),
});

/**
 * A submission intent (POST /v1/intents). The key is the application's own name for the
 * submission and the tag the provider is asked to carry, so it is held to what providers' tag
 * fields take: printable, at most 200 characters.
 */
export const intentSchema = z.strictObject({
  provider: providerNameSchema,
  key: idSchema(LIMITS.intentKeyLength),
  kind: text(LIMITS.kindLength).optional(),
  metadata: jsonValue(LIMITS.metadataBytes, "metadata"),
});
export type IntentInput = z.output<typeof intentSchema>;

export const attachSchema = z.strictObject({ id: jobId });

export function parseIntentInput(input: unknown): IntentInput {
  return parseWith(intentSchema, input, "invalid-request");
}

export function parseIntentKey(key: unknown): string {
  return parseWith(z.object({ key: idSchema(LIMITS.intentKeyLength) }), { key }, "invalid-request").key;
}

export type ObservationInput = z.input<typeof observationSchema>;
export type RegistrationInput = z.input<typeof registrationSchema>;

export function parseObservation(input: unknown): Observation {
  return parseWith(observationSchema, input, "invalid-observation") as Observation;
}

export function parseRegistration(input: unknown): Registration {
  return parseWith(registrationSchema, input, "invalid-request") as Registration;
}

export function parseJobKey(provider: unknown, id: unknown): { provider: string; id: string } {
  return parseWith(
    z.object({ provider: providerNameSchema, id: jobId }),
    { provider, id },
    "invalid-request",
  );
}

/** Parses with a schema, turning zod's issues into one FinalityError naming the first bad field. */
export function parseWith<T extends z.ZodType>(
  schema: T,
  input: unknown,
  code: "invalid-observation" | "invalid-request",
): z.output<T> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  let field = issue?.path.join(".") || "(root)";
  let message = issue?.message ?? "invalid";
  if (issue?.code === "unrecognized_keys" && issue.path.length === 0 && schema instanceof z.ZodObject) {
    // Name the key itself, and the declared one it was probably meant to be.
    const key = issue.keys[0] ?? "";
    field = key;
    message = `unknown field${didYouMean(key, Object.keys(schema.shape))}`;
  }
  const tooLarge = parsed.error.issues.some((i) => i.code === "custom" && i.params?.tooLarge);
  throw new FinalityError(tooLarge ? "payload-too-large" : code, `${field}: ${message}`, {
    details: {
      field,
      issues: parsed.error.issues.map((i) => ({ path: i.path.join("."), message: i.message })),
    },
  });
}

/** Byte length of a value's JSON text, or null when it cannot be serialised. */
export function jsonSize(value: unknown): number | null {
  const json = jsonText(value);
  return json === null ? null : utf8Length(json);
}

/** A value's JSON text, or null when it cannot be serialised (a cycle, a BigInt, undefined). */
export function jsonText(value: unknown): string | null {
  try {
    return JSON.stringify(value) ?? null;
  } catch {
    return null;
  }
}

const encoder = new TextEncoder();

/** Bytes of `text` in UTF-8. */
export function utf8Length(text: string): number {
  return encoder.encode(text).length;
}

/** Whether a parsed JSON value nests arrays/objects deeper than `max`. Iterative: no stack to overflow. */
export function exceedsDepth(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (typeof node !== "object" || node === null) continue;
    if (depth >= max) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof child === "object" && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}
