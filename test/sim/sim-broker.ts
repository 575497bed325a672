import { DeliveryError } from "../../src/engine/delivery-error.js";
import type { EffectDelivery } from "../../src/engine/effect-definitions.js";
import type { EffectTarget } from "../../src/engine/effect-target.js";
import type { SimWorld } from "./sim-world.js";

// A message broker as the outbox sees one (JetStream, or Redis with its guard): it stores each
// message once per idempotency key, whatever reaches it. Its faults: it is down; the publish
// lands but its ack is lost (the dispatcher retries a message the broker has); the client sends
// the publish twice. Its consumer hands each stored message to the sink, as a consumer that
// dedupes on the key would. The broker lives outside the process: it outlives every crash.

/** The mutant switch: a broker without dedupe stores a retried publish again. */
export const SIM_BROKER = { dedupe: true };

export class SimBroker {
  /** Every message stored, in order: what a consumer reading the stream sees. */
  readonly stream: { key: string; effect: string; at: number }[] = [];
  private readonly keys = new Set<string>();

  publish(world: SimWorld, delivery: EffectDelivery): void {
    const key = delivery.idempotencyKey;
    if (SIM_BROKER.dedupe && this.keys.has(key)) {
      world.log(`  broker: duplicate ${key} dropped`);
      return;
    }
    this.keys.add(key);
    this.stream.push({ key, effect: delivery.effect, at: world.now() });
    world.sink.receive(delivery, world.now());
    world.log(`  broker: stored ${delivery.effect} ${delivery.job.provider}/${delivery.job.id} key=${key}`);
  }
}

/** The dispatcher's `nats` target in the simulation: the broker, with the fault the step drew. */
export function simBrokerTarget(world: SimWorld): EffectTarget {
  return {
    kind: "nats",
    deliver: (_definition, delivery) =>
      world.guardInFlight(delivery, async () => {
        world.assertAlive();
        const fault = world.brokerFault();
        if (fault === "down") {
          world.count("broker-down");
          throw new DeliveryError("nats nats://sim:4222 is unreachable: connection refused");
        }
        world.broker.publish(world, delivery);
        if (fault === "duplicate-publish") {
          world.count("broker-publish-duplicated");
          world.broker.publish(world, delivery);
        }
        if (fault === "ack-dropped") {
          world.count("broker-ack-dropped");
          throw new DeliveryError("publish ack lost");
        }
      }),
  };
}
