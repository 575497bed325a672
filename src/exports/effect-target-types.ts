// The effect target's public types, listed once: `finality` and `finality/brokers` both
// re-export them with `export type *`, which is erased at runtime, so neither entry loads more
// than it did.
export type {
  AmqpDestination,
  CloudEventsOptions,
  DestinationKind,
  DestinationStatus,
  EffectTarget,
  NatsDestination,
  RedisDestination,
} from "../engine/effect-target.js";
