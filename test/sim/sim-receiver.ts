import { DeliveryError } from "../../src/engine/delivery-error.js";
import type { EffectDelivery } from "../../src/engine/effect-definitions.js";
import { survive } from "./sim-steps.js";
import { SimCrash } from "./sim-types.js";
import type { SimWorld } from "./sim-world.js";

/** The receiver applies the delivery, or fails it with the fault the step drew. */
export async function receiveEffect(world: SimWorld, delivery: EffectDelivery): Promise<void> {
  // A dead process sends nothing: a delivery already claimed dies with it.
  world.assertAlive();
  const fault = world.receiverFault();
  if (fault === "5xx") {
    world.count("receiver-5xx");
    throw new DeliveryError("receiver answered 503");
  }
  if (fault === "429") {
    world.count("receiver-429");
    throw new DeliveryError("receiver answered 429", 3_000);
  }
  if (fault === "slow") await slowReceiver(world, delivery);
  world.sink.receive(delivery, world.now());
  world.log(
    `  effect ${delivery.effect} ${delivery.job.provider}/${delivery.job.id} key=${delivery.idempotencyKey} attempt=${delivery.attempt}`,
  );
  if (world.crashAfterNextSend) {
    world.crashAfterNextSend = false;
    world.count("crash-after-send");
    world.log("  ! process crashed after sending an effect, before marking it done");
    world.power.dead = true;
    throw new SimCrash("crashed after send");
  }
  if (fault === "timeout-after-apply") {
    world.count("receiver-timeout-after-apply");
    advanceWhileInFlight(world, world.schedule.effectTimeoutMs);
    throw new DeliveryError("delivery timed out");
  }
}

/**
 * Time a receiver takes, as the simulated clock sees it: never past one delivery timeout after
 * the dispatch step began. The dispatcher renews its leases and stops an attempt at its timeout
 * on real timers, which the simulated clock does not drive; deliveries that run side by side
 * would otherwise add up their times on one clock and carry an attempt past its lease while
 * its (really concurrent) renewals never ran.
 */
function advanceWhileInFlight(world: SimWorld, ms: number): void {
  const target =
    world.inFlightClockCap === null ? world.now() + ms : Math.min(world.now() + ms, world.inFlightClockCap);
  if (target > world.now()) world.clock.set(target);
}

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
  advanceWhileInFlight(world, Math.min(slowMs, timeoutMs));
  world.log(
    `  receiver slow on ${delivery.effect} ${delivery.job.provider}/${delivery.job.id}: ${slowMs} ms`,
  );
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
