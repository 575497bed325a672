import { jsonSize, LIMITS, utf8Length } from "../core/validation.js";
import { DeliveryError } from "./delivery-error.js";
import type { EffectDefinition, EffectDelivery } from "./effect-definitions.js";
import { type EffectMessage, encodeEffectMessage } from "./effect-message.js";

// A delivery encoded so that its destination can take it. A legal job (64 KB metadata, 512 KB
// result, 512 KB error) encodes to ~1.1 MB, over NATS's default max_payload (1 MB): such a
// message was refused on every retry until it aged out and was marked dead. Instead the largest
// of the job's result, error and metadata are replaced, one at a time, by a marker saying so,
// until the message fits. The ledger keeps them whole: GET the job for the full values.

/** Bytes kept free under a destination's limit for what travels beside the body (protocol headers). */
export const MESSAGE_HEADROOM_BYTES = 1024;

/** The job fields a message may carry cut, largest first. */
const CUTTABLE = ["result", "error", "metadata"] as const;
type CutField = (typeof CUTTABLE)[number];

/**
 * What a message carries in place of a value its destination had no room for. The same shape as
 * a stored value cut by the ledger (core/bounded-value.ts), with its own reason: this one is cut
 * from the message only, and the job in the ledger still holds it whole.
 */
interface MessageCutValue {
  truncated: true;
  reason: "message-too-large";
  /** The value's JSON size. */
  bytes: number;
  /** The largest message the destination takes. */
  limitBytes: number;
  limitDepth: number;
}

/** An encoded delivery and the fields cut from it to fit (empty: the message is whole). */
interface FittedMessage extends EffectMessage {
  cut: CutField[];
}

/** The limit that holds: the lower of the effect's `maxMessageBytes` and the destination's own. */
export function messageLimit(configured: number | undefined, destination: number | null): number | null {
  if (configured === undefined) return destination;
  return destination === null ? configured : Math.min(configured, destination);
}

/** The value of the `finality-truncated` header or field: the cut fields, comma-separated. */
export function truncatedHeader(message: EffectMessage): string | null {
  return message.cut && message.cut.length > 0 ? message.cut.join(",") : null;
}

/**
 * The delivery encoded as its effect's `format` asks (with the attempt's `trace` headers), at
 * most `limitBytes` with what travels beside it (`null`: no limit). Throws a DeliveryError when even the message with every cuttable field
 * cut does not fit: the destination's limit is below what any message needs.
 */
export function fitEffectMessage(
  definition: EffectDefinition,
  delivery: EffectDelivery,
  source: string,
  limitBytes: number | null,
  trace?: Record<string, string>,
): FittedMessage {
  const whole = encodeEffectMessage(definition, delivery, source);
  if (limitBytes === null || fits(whole, trace, delivery, limitBytes)) return fitted(whole, trace, []);
  const sizes = CUTTABLE.map((field) => ({ field, bytes: jsonSize(delivery.job[field]) ?? 0 }))
    .filter(({ field }) => delivery.job[field] !== null && delivery.job[field] !== undefined)
    .sort((a, b) => b.bytes - a.bytes);
  let job = delivery.job;
  const cut: CutField[] = [];
  for (const { field, bytes } of sizes) {
    const marker: MessageCutValue = {
      truncated: true,
      reason: "message-too-large",
      bytes,
      limitBytes,
      limitDepth: LIMITS.jsonDepth,
    };
    // Cold path (a message over its limit): spreads are fine here.
    job = { ...job, [field]: marker };
    cut.push(field);
    // Cold path.
    const message = encodeEffectMessage(definition, { ...delivery, job }, source);
    if (fits(message, trace, delivery, limitBytes)) return fitted(message, trace, cut);
  }
  throw new DeliveryError(
    `effect "${definition.name}": the message does not fit the destination's limit of ${limitBytes} bytes even with the job's result, error and metadata cut`,
  );
}

/**
 * The message with its trace headers and cut fields, every one in the same shape: built key by
 * key rather than spread, since each key after a spread costs V8 a runtime call and a new hidden
 * class (this runs once per delivery).
 */
function fitted(
  message: EffectMessage,
  trace: Record<string, string> | undefined,
  cut: CutField[],
): FittedMessage {
  const out: FittedMessage = {
    body: message.body,
    contentType: message.contentType,
    attributes: message.attributes,
    cut,
  };
  if (trace !== undefined) out.trace = trace;
  return out;
}

/** Whether the message and what travels beside it (attributes, trace, key, headroom) fit. */
function fits(
  message: EffectMessage,
  trace: Record<string, string> | undefined,
  delivery: EffectDelivery,
  limitBytes: number,
): boolean {
  // A body at most a third of the budget in UTF-16 units fits without being encoded (hot path).
  const beside =
    MESSAGE_HEADROOM_BYTES +
    delivery.idempotencyKey.length +
    fieldBytes(message.attributes) +
    fieldBytes(trace);
  const budget = limitBytes - beside;
  if (message.body.length * 3 <= budget) return true;
  return utf8Length(message.body) <= budget;
}

/** What named string fields (attributes, trace headers) take beside a body, framing included. */
function fieldBytes(fields: Record<string, string> | null | undefined): number {
  let bytes = 0;
  if (fields)
    for (const [name, value] of Object.entries(fields)) bytes += utf8Length(name) + utf8Length(value) + 8;
  return bytes;
}
