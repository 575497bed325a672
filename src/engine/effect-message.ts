import { intentToJson } from "../core/intent-model.js";
import { isoTime } from "../core/iso-time.js";
import { jobToJson } from "../core/job-json.js";
import type { EffectDefinition, EffectDelivery } from "./effect-definitions.js";

// The bytes of one effect delivery, the same for every destination: Finality's own JSON (what a
// URL effect has always POSTed), or a CloudEvents 1.0 event. Each target then carries it by its
// protocol: HTTP headers, NATS headers, AMQP properties, Redis stream fields.

/** An encoded delivery: the body, its content type, and (binary CloudEvents) the attributes. */
export interface EffectMessage {
  body: string;
  contentType: string;
  /**
   * CloudEvents binary mode: the event's attributes other than `data` and `datacontenttype`, by
   * their bare names (`id`, `source`, ...); each binding adds its prefix (`ce-`, `cloudEvents_`).
   */
  attributes: Record<string, string> | null;
  /** W3C trace context of the attempt (`traceparent`), for the broker's headers; absent when tracing is off. */
  trace?: Record<string, string>;
  /**
   * The job's fields cut to fit the destination's message limit (engine/message-fit.ts); each
   * destination says so beside the body (`finality-truncated` header or field). Absent: whole.
   */
  cut?: readonly string[];
}

/** Finality's own body: `{type, effect, idempotencyKey, attempt, job}`, and `intent` on `intent.orphaned`. */
export function finalityBody(delivery: EffectDelivery): string {
  return JSON.stringify({
    type: delivery.type,
    effect: delivery.effect,
    idempotencyKey: delivery.idempotencyKey,
    attempt: delivery.attempt,
    job: jobToJson(delivery.job),
    ...(delivery.intent !== undefined ? { intent: intentToJson(delivery.intent) } : {}),
  });
}

/**
 * The CloudEvents 1.0 attributes of a delivery. `id` is the idempotency key, so a consumer dedupes
 * on (`source`, `id`) as the spec asks; the attempt number, which changes on every retry, is the
 * `finalityattempt` extension rather than part of `data`, so `data` is the same on every attempt.
 */
function cloudEventOf(delivery: EffectDelivery, source: string) {
  const { job } = delivery;
  const state =
    delivery.type === "job.stuck" ? "stuck" : delivery.type === "intent.orphaned" ? "orphaned" : job.state;
  return {
    specversion: "1.0",
    id: delivery.idempotencyKey,
    source,
    // An orphaned intent's alert is about the intent, not a job: `finality.intent.orphaned`.
    type: delivery.type === "intent.orphaned" ? "finality.intent.orphaned" : `finality.job.${state}`,
    subject: `${job.provider}/${job.id}`,
    time: isoTime(job.settledAt ?? job.updatedAt),
    finalityattempt: String(delivery.attempt),
    // Last, in the structured body's order (it is this object as it is).
    datacontenttype: "application/json",
    data: {
      effect: delivery.effect,
      job: jobToJson(job),
      ...(delivery.intent !== undefined ? { intent: intentToJson(delivery.intent) } : {}),
    },
  };
}

/** A delivery encoded as its effect's `format` asks. `source` names this Finality instance. */
export function encodeEffectMessage(
  definition: EffectDefinition,
  delivery: EffectDelivery,
  source: string,
): EffectMessage {
  if (definition.format !== "cloudevents")
    return { body: finalityBody(delivery), contentType: "application/json", attributes: null };
  const event = cloudEventOf(delivery, definition.cloudevents?.source ?? source);
  if (definition.cloudevents?.mode === "binary") {
    const { data, datacontenttype, ...attributes } = event;
    return { body: JSON.stringify(data), contentType: datacontenttype, attributes };
  }
  return {
    body: JSON.stringify(event),
    contentType: "application/cloudevents+json; charset=utf-8",
    attributes: null,
  };
}

/** The attributes under a binding's prefix: `ce-id`, `cloudEvents_id`, ... */
export function prefixedAttributes(message: EffectMessage, prefix: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (message.attributes !== null)
    for (const [name, value] of Object.entries(message.attributes)) out[`${prefix}${name}`] = value;
  return out;
}

/** Who sends, when the effect names no `cloudevents.source`: hosts pass their own (host name). */
export const DEFAULT_CLOUDEVENTS_SOURCE = "finality://localhost";
