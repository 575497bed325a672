import type { Observation } from "./model.js";
import { sha256Hex } from "./sha256-hex.js";
import { isCanonicalState } from "./states.js";
import { exceedsDepth, jsonText, LIMITS, utf8Length } from "./validation.js";

/**
 * What is stored in place of a result or error that cannot be stored whole: too large, nested
 * too deep (JSON.stringify and jsonb would overflow their stacks), or not JSON at all. The full
 * value stays at the provider (or with the worker); the job keeps its state.
 */
interface TruncatedValue {
  truncated: true;
  reason: "too-large" | "too-deep" | "not-json";
  /** The value's JSON size, when it has one. */
  bytes?: number;
  limitBytes: number;
  limitDepth: number;
}

/**
 * `value` when it can be stored (JSON, at most `maxBytes`, at most `LIMITS.jsonDepth` deep),
 * else a `TruncatedValue` saying why. Never throws, whatever `value` is (cycles included).
 */
export function boundJsonValue(value: unknown, maxBytes: number = LIMITS.resultBytes): unknown {
  if (value === undefined || value === null) return value;
  // A short string or a number is always storable: no walk, no stringify on the hot path.
  if (typeof value === "number" || typeof value === "boolean") return value;
  // (6 bytes a character at most: a control character or lone surrogate is written as \uXXXX.)
  if (typeof value === "string" && value.length * 6 + 2 <= maxBytes) return value;
  if (typeof value === "object" && exceedsDepth(value, LIMITS.jsonDepth)) return marker("too-deep", maxBytes);
  const json = jsonText(value);
  if (json === null) return marker("not-json", maxBytes);
  // UTF-8 takes at most 3 bytes per UTF-16 unit: a text that short fits without being encoded
  // (the usual result, on the hot path of every webhook that settles a job).
  if (json.length * 3 <= maxBytes) return value;
  const size = utf8Length(json);
  if (size > maxBytes) return { ...marker("too-large", maxBytes), bytes: size };
  return value;
}

function marker(reason: TruncatedValue["reason"], maxBytes: number): TruncatedValue {
  return { truncated: true, reason, limitBytes: maxBytes, limitDepth: LIMITS.jsonDepth };
}

/** Whether a stored result or error says it was cut (`truncated: true` at its top level). */
export function isTruncated(value: unknown): boolean {
  return typeof value === "object" && value !== null && (value as { truncated?: unknown }).truncated === true;
}

/**
 * An observation made storable, whatever its source: result and error bounded (so that an
 * oversized or unstorable value never costs the state), and a state name that no table knew
 * held to the ledger's text limits (it is only recorded, as `unknown-state`, but recorded it
 * must be: a NUL or a megabyte of text would fail the write on every retry and poll).
 */
export function boundObservation(obs: Observation): Observation {
  let bounded = obs;
  for (const field of ["result", "error"] as const) {
    const value = obs[field];
    if (value === undefined || value === null) continue;
    const kept = boundJsonValue(value);
    if (kept !== value) bounded = { ...bounded, [field]: kept };
  }
  if (!isCanonicalState(obs.state)) {
    const state = storableText(obs.state, LIMITS.stateLength);
    if (state !== obs.state) bounded = { ...bounded, state };
  }
  if (obs.deliveryId !== undefined) {
    const deliveryId = storableDeliveryId(obs.deliveryId);
    if (deliveryId !== obs.deliveryId) bounded = { ...bounded, deliveryId };
  }
  if (obs.rawState !== undefined) {
    const rawState = storableText(obs.rawState, LIMITS.stateLength);
    if (rawState !== obs.rawState) bounded = { ...bounded, rawState };
  }
  return bounded;
}

/** The fields of an observation that were cut, for its audit event. */
export function truncatedFields(obs: Observation): ("result" | "error")[] {
  return (["result", "error"] as const).filter((field) => isTruncated(obs[field]));
}

const CONTROL_CHARS =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: replacing them is the point.
  /[\u0000-\u001f\u007f-\u009f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

// The test on every webhook's delivery id: the same characters as CONTROL_CHARS, the lone
// surrogates asked of the string itself (a look-behind makes the regular expression ~3× dearer).
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point.
const HAS_CONTROL_CHAR = /[\u0000-\u001f\u007f-\u009f]/;

/** Control characters and lone surrogates as U+FFFD, cut to `max` characters (with "…"). */
export function storableText(text: string, max: number): string {
  const clean = text.replace(CONTROL_CHARS, "\ufffd");
  if (clean.length <= max) return clean;
  // Never cut between the two halves of a surrogate pair.
  const cut = clean.slice(0, max - 1).replace(/[\ud800-\udbff]$/, "");
  return `${cut}…`;
}

/**
 * A sender's delivery id as the ledger can key it: itself when it is at most
 * `LIMITS.deliveryIdLength` characters of well-formed text without control characters, else
 * `sha256:` and the hash of it. Stable (a redelivery gets the same key, so it is still a
 * duplicate), and short enough for any index (PostgreSQL refuses a btree entry over ~2.7 KB: such
 * an id failed the write on every retry).
 */
export function storableDeliveryId(id: string): string {
  if (
    id.length > 0 &&
    id.length <= LIMITS.deliveryIdLength &&
    !HAS_CONTROL_CHAR.test(id) &&
    id.isWellFormed()
  )
    return id;
  return `sha256:${sha256Hex(id)}`;
}
