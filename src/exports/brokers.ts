// The `finality/brokers` entry: effect targets for message brokers, for a library's own
// dispatcher (`createDispatcher(finality, { targets: { nats: createNatsEffectTarget() } })`).
// Apart from `finality` so that importing the engine loads no broker client.
export { createAmqpEffectTarget } from "../engine/brokers/amqp-effect-target.js";
export type { BrokerTargetOptions } from "../engine/brokers/broker-target.js";
export { createNatsEffectTarget } from "../engine/brokers/nats-effect-target.js";
export { createRedisEffectTarget, redisGuardKey } from "../engine/brokers/redis-effect-target.js";
export type * from "./effect-target-types.js";
