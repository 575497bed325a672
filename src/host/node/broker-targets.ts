import { hostname } from "node:os";
import type { BrokerTargetOptions } from "../../engine/brokers/broker-target.js";
import type { EffectDefinition } from "../../engine/effect-definitions.js";
import type { BrokerKind, DestinationStatus, EffectTarget } from "../../engine/effect-target.js";

/** The broker targets of `finality serve`: built before the server, connected on first use. */
export interface BrokerTargets {
  /** A target for each broker kind some effect goes to; none for the others. */
  targets: Partial<Record<BrokerKind, EffectTarget>>;
  /** Every broker effect's connection, for /readyz and /metrics. */
  status(): DestinationStatus[];
  /** After the dispatcher stopped: closes the kept connections. */
  close(): Promise<void>;
}

/** This instance as a CloudEvents `source`, when an effect names none. */
export function cloudEventsSource(): string {
  return `finality://${hostname()}`;
}

type TargetFactory = (options: BrokerTargetOptions) => EffectTarget;

/**
 * Each broker's client library is loaded only when an effect goes to that broker: nats, amqplib
 * and ioredis together hold about 25 MiB of a process's memory once imported, which a service
 * without broker effects should not carry (`test/host/lazy-modules.test.ts`).
 */
const LOADERS: Record<BrokerKind, () => Promise<TargetFactory>> = {
  nats: async () => (await import("../../engine/brokers/nats-effect-target.js")).createNatsEffectTarget,
  amqp: async () => (await import("../../engine/brokers/amqp-effect-target.js")).createAmqpEffectTarget,
  redis: async () => (await import("../../engine/brokers/redis-effect-target.js")).createRedisEffectTarget,
};

export async function createBrokerTargets(
  effects: readonly EffectDefinition[],
  options: { now: () => number; source?: string },
): Promise<BrokerTargets> {
  const shared: BrokerTargetOptions = {
    now: options.now,
    source: options.source ?? cloudEventsSource(),
    effects,
  };
  const targets: Partial<Record<BrokerKind, EffectTarget>> = {};
  for (const kind of Object.keys(LOADERS) as BrokerKind[])
    if (effects.some((effect) => effect[kind] !== undefined)) targets[kind] = (await LOADERS[kind]())(shared);
  const all = Object.values(targets);
  return {
    targets,
    status: () => all.flatMap((target) => target.status?.() ?? []),
    close: async () => {
      await Promise.all(all.map((target) => target.close?.()));
    },
  };
}
