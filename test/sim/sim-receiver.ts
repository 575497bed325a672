import { DeliveryError } from "../../src/engine/delivery-error.js";
import type { EffectDelivery } from "../../src/engine/effect-definitions.js";
import { survive } from "./sim-steps.js";
import type { SimWorld } from "./sim-world.js";

/**
 * A slow receiver: it takes up to 1.3 × the delivery timeout to answer. While it works, a second
 * replica's dispatcher runs over the same database (once, not from inside itself): the delivery
 * in flight is leased, so the replica must not claim it. Past the timeout, the dispatcher would
 * have stopped the attempt: the delivery fails (not applied) and is retried under its key.
 */
export async function slowReceiver(world: SimWorld, delivery: EffectDelivery): Promise<void> {
  world.count("receiver-slow");
  const timeoutMs = world.schedule.effectTimeoutMs;
  const slowMs = Math.floor(world.receiverRandom() * 1.3 * timeoutMs);
  world.clock.advance(Math.min(slowMs, timeoutMs));
  world.log(`  receiver slow on ${delivery.effect} ${delivery.job.provider}/${delivery.job.id}: ${slowMs} ms`);
  if (!world.inReplica) {
    world.count("replica-dispatch-in-flight");
    world.inReplica = true;
    try {
      await survive(world, () => world.proc.replica.runOnce());
    } finally {
      world.inReplica = false;
    }
  }
  world.assertAlive();
  if (slowMs >= timeoutMs) throw new DeliveryError("delivery timed out");
}
