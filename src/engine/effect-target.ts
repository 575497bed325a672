import type { DeliveryError } from "./delivery-error.js";
import type { EffectDefinition, EffectDelivery } from "./effect-definitions.js";

// Where an outbox delivery goes. The dispatcher owns the outbox's promises (lease, timeout,
// retries with backoff, dead letters, one key per effect); a target only sends one message and
// resolves once its receiver has it: a 2xx for HTTP, the publish ack for NATS JetStream, the
// broker's confirm for RabbitMQ, the XADD's reply for Redis. Anything else throws (a
// DeliveryError, or any error: the dispatcher records it as a retry).

/** The destinations an effect may name; `handler` is the in-process function. */
export const DESTINATION_KINDS = ["handler", "url", "nats", "amqp", "redis"] as const;
export type DestinationKind = (typeof DESTINATION_KINDS)[number];
export type BrokerKind = Exclude<DestinationKind, "handler" | "url">;

/** Whether a target's connection is up, for `/readyz` and the `..._connected` gauge. */
export interface DestinationStatus {
  effect: string;
  destination: DestinationKind;
  connected: boolean;
  /** The last connection failure, redacted (no credentials), while not connected. */
  error?: string;
}

/**
 * A delivery's stop without an AbortSignal: an AbortController and its listeners cost a delivery
 * ~18,000 instructions and outlive it in the heap, so a target that can do without one is given
 * this instead (`deliverWithStop`).
 */
export interface DeliveryStop {
  /** Why the attempt was stopped (timed out, claim lost, lease running out), or null while it may go on. */
  readonly reason: DeliveryError | null;
  /** Calls `listener` once when the attempt is stopped (never when it already was); returns its removal. */
  onStop(listener: (reason: DeliveryError) => void): () => void;
  /** The same stop as an AbortSignal, made when first read (for fetch and other APIs that take one). */
  readonly signal: AbortSignal;
}

export interface EffectTarget {
  readonly kind: DestinationKind;
  /** Sends one delivery; resolves once the destination has it. */
  deliver(definition: EffectDefinition, delivery: EffectDelivery, signal: AbortSignal): Promise<void>;
  /** The same with a DeliveryStop, no AbortSignal made unless read from it: the dispatcher prefers it. */
  deliverWithStop?(definition: EffectDefinition, delivery: EffectDelivery, stop: DeliveryStop): Promise<void>;
  /** The connections this target keeps, one per effect that used it; none for HTTP. */
  status?(): DestinationStatus[];
  /** Closes kept connections; deliveries after it open them again. */
  close?(): Promise<void>;
}

/** Which destination an effect names (the config allows exactly one). */
export function destinationOf(definition: EffectDefinition): DestinationKind | null {
  if (definition.handler) return "handler";
  if (definition.url) return "url";
  if (definition.nats) return "nats";
  if (definition.amqp) return "amqp";
  if (definition.redis) return "redis";
  return null;
}

/** Every URL an effect's destination holds: failures are scrubbed of them before being stored. */
export function destinationUrls(definition: EffectDefinition): string[] {
  return [
    ...(definition.url ? [definition.url] : []),
    ...(definition.nats?.servers ?? []),
    ...(definition.amqp ? [definition.amqp.url] : []),
    ...(definition.redis ? [definition.redis.url] : []),
  ];
}
