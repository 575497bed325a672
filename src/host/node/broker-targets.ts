import { hostname } from "node:os";
import { createAmqpEffectTarget } from "../../engine/brokers/amqp-effect-target.js";
import type { BrokerTargetOptions } from "../../engine/brokers/broker-target.js";
import { createNatsEffectTarget } from "../../engine/brokers/nats-effect-target.js";
import { createRedisEffectTarget } from "../../engine/brokers/redis-effect-target.js";
import type { EffectDefinition } from "../../engine/effect-definitions.js";
import type { DestinationStatus, EffectTarget } from "../../engine/effect-target.js";

/** The broker targets of `finality serve`: built before the server, connected on first use. */
export interface BrokerTargets {
  targets: { nats: EffectTarget; amqp: EffectTarget; redis: EffectTarget };
  /** Every broker effect's connection, for /readyz and /metrics. */
  status(): DestinationStatus[];
  /** After the dispatcher stopped: closes the kept connections. */
  close(): Promise<void>;
}

/** This instance as a CloudEvents `source`, when an effect names none. */
export function cloudEventsSource(): string {
  return `finality://${hostname()}`;
}

export function createBrokerTargets(
  effects: readonly EffectDefinition[],
  options: { now: () => number; source?: string },
): BrokerTargets {
  const shared: BrokerTargetOptions = {
    now: options.now,
    source: options.source ?? cloudEventsSource(),
    effects,
  };
  const targets = {
    nats: createNatsEffectTarget(shared),
    amqp: createAmqpEffectTarget(shared),
    redis: createRedisEffectTarget(shared),
  };
  const all = Object.values(targets);
  return {
    targets,
    status: () => all.flatMap((target) => target.status?.() ?? []),
    close: async () => {
      await Promise.all(all.map((target) => target.close?.()));
    },
  };
}
