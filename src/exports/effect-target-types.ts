// The effect target's public types, listed once: `finality` and `finality/brokers` both
// re-export them with `export type *`, which is erased at runtime, so neither entry loads more
// than it did.
export type {
  AmqpDestination,
  CloudEventsOptions,
  NatsDestination,
  RedisDestination,
} from "../engine/effect-destinations.js";
export type {
  DeliveryStop,
  DestinationKind,
  DestinationStatus,
  EffectTarget,
} from "../engine/effect-target.js";
