import type { Random } from "../../src/core/clock.js";
import { weighted } from "./schedule.js";
import { abortedClaim } from "./sim-claims.js";
import { discoverySweep, dueSweep } from "./sim-discovery.js";
import { badTimeWebhook, lateWebhook, retentionPass } from "./sim-late.js";
import { deliverMessage, emitWebhooks, senderRetry } from "./sim-network.js";
import { registerDue } from "./sim-register.js";
import {
  type BrokerFault,
  POLL_FAULTS,
  type PollFault,
  type ReceiverFault,
  SimCrash,
  type Step,
} from "./sim-types.js";
import { killedWhileHolding, workersAct } from "./sim-workers.js";
import type { SimWorld } from "./sim-world.js";

const POLL_FAULT_WEIGHTS: Record<PollFault, number> = {
  ok: 60,
  stale: 10,
  slow: 7,
  failing: 8,
  "429": 7,
  regress: 5,
  "not-found": 3,
  "bad-time": 3,
};
const RECEIVER_FAULT_WEIGHTS: Record<ReceiverFault, number> = {
  ok: 70,
  "5xx": 15,
  "timeout-after-apply": 10,
  "429": 5,
  slow: 25,
};
const BROKER_FAULT_WEIGHTS: Record<BrokerFault, number> = {
  ok: 60,
  down: 10,
  "ack-dropped": 15,
  "duplicate-publish": 15,
};
const POLL_COUNTED = new Set<PollFault>(POLL_FAULTS.filter((f) => f !== "ok"));

/** Runs `operation`; a failure caused by the process having crashed is the crash, nothing more. */
export async function survive(world: SimWorld, operation: () => Promise<unknown>): Promise<void> {
  try {
    await operation();
  } catch (error) {
    if (world.power.dead || error instanceof SimCrash) return;
    throw error;
  }
}

/** What happens whenever time moves: the provider's sender, the application's retries, the workers. */
export async function afterTime(
  world: SimWorld,
  options: { mayClaim: boolean; chaos?: Random },
): Promise<void> {
  emitWebhooks(world);
  await survive(world, () => dueSweep(world));
  await registerDue(world);
  for (const idempotencyKey of world.pendingEnqueues.splice(0)) await enqueue(world, idempotencyKey);
  await workersAct(world, world.workers, { mayClaim: options.mayClaim, dropHeartbeat: options.chaos });
}

async function enqueue(world: SimWorld, idempotencyKey: string): Promise<void> {
  try {
    const { run, created } = await world.proc.runs.enqueue({ kind: "render", idempotencyKey });
    if (world.power.dead) throw new SimCrash("no answer");
    if (created || !world.runIds.includes(run.id)) world.runIds.push(run.id);
    world.log(`  enqueued run ${run.id} (${idempotencyKey})`);
  } catch (error) {
    if (!(world.power.dead || error instanceof SimCrash)) throw error;
    world.pendingEnqueues.push(idempotencyKey);
  }
}

export async function runStep(world: SimWorld, step: Step): Promise<void> {
  switch (step.kind) {
    case "advance":
    case "clock-jump":
      if (step.kind === "clock-jump") world.count("clock-jump");
      world.clock.advance(step.ms);
      return afterTime(world, { mayClaim: true, chaos: world.stepRandom(step.ms) });
    case "submit": {
      const plan = world.schedule.jobs[world.submitted++];
      if (plan === undefined) return;
      world.truth.add(plan, world.now());
      world.log(
        `  submitted ${plan.provider}/${plan.id}: ${plan.timeline.map((s) => `${s.state}@${s.afterMs / 1000}s`).join(" ")}`,
      );
      emitWebhooks(world);
      if (plan.timeline.every((s) => s.sender === "never-sent")) world.count("webhook-type-not-subscribed");
      if (plan.neverRegistered) {
        // The application crashed after the provider accepted the job: nobody will register it.
        world.count("crash-before-register");
        world.log(`  ${plan.provider}/${plan.id} is never registered (the application crashed)`);
        return;
      }
      world.pendingRegistrations.push({
        provider: plan.provider,
        id: plan.id,
        kind: plan.kind,
        at: world.now() + plan.registerAfterMs,
      });
      return registerDue(world);
    }
    case "enqueue-run":
      return enqueue(world, `run-${world.enqueued++}`);
    case "deliver":
      return deliverStep(world, step);
    case "reconcile": {
      const random = world.stepRandom(step.rand);
      world.pollFault = () => counted(world, weighted(random, POLL_FAULT_WEIGHTS), POLL_COUNTED, "poll-");
      await survive(world, () => world.proc.reconciler.runOnce());
      world.pollFault = () => "ok";
      return;
    }
    case "dispatch": {
      const random = world.stepRandom(step.rand);
      // The receiver counts the faults it acts on (a delivery that never reaches it counts none).
      world.receiverFault = () => weighted(random, RECEIVER_FAULT_WEIGHTS);
      world.brokerFault = () => weighted(random, BROKER_FAULT_WEIGHTS);
      world.receiverRandom = random;
      world.inFlightClockCap = world.now() + world.schedule.effectTimeoutMs;
      await survive(world, () => world.proc.dispatcher.runOnce());
      world.inFlightClockCap = null;
      world.receiverFault = () => "ok";
      world.brokerFault = () => "ok";
      return;
    }
    case "sweep":
      if (step.crashAfter !== null) world.power.armed = { afterTx: step.crashAfter, mode: "before-commit" };
      world.power.sweeping = true;
      await survive(world, () => world.proc.runs.sweepOnce());
      world.power.sweeping = false;
      // A sweep with fewer expiries than the crash point did not crash: disarm.
      if (step.crashAfter !== null && !world.power.dead) world.power.armed = null;
      return;
    case "arm-crash":
      world.power.armed = { afterTx: step.afterTx, mode: step.mode };
      return;
    case "arm-crash-after-send":
      world.crashAfterNextSend = true;
      return;
    case "kill":
      world.count("crash-at-step-boundary");
      world.power.dead = true;
      return;
    case "worker-kill": {
      const worker = world.workers[step.worker];
      if (worker === undefined || worker.dead) return;
      world.count("worker-killed");
      worker.dead = true;
      killedWhileHolding(world, worker);
      return;
    }
    case "worker-pause": {
      const worker = world.workers[step.worker];
      if (worker === undefined || worker.dead) return;
      world.count("worker-paused");
      worker.pausedUntil = world.now() + step.ms;
      return;
    }
    case "skew":
      world.count("sender-skew");
      world.skewMs = step.ms;
      return;
    case "retention":
    case "late-webhook":
    case "bad-time":
    case "aborted-claim":
      return extra(world, step);
    case "discover":
      return survive(world, () => discoverySweep(world, step.stale));
    case "cancel-run": {
      const runId = world.runIds[Math.floor(step.pick * world.runIds.length)];
      if (runId === undefined) return;
      world.count("run-cancelled");
      return survive(world, () => world.proc.runs.cancel(runId));
    }
  }
}

async function extra(world: SimWorld, step: Step): Promise<void> {
  switch (step.kind) {
    case "retention":
      return retentionPass(world, step);
    case "late-webhook":
      return lateWebhook(world, step);
    case "bad-time":
      return badTimeWebhook(world, step);
    case "aborted-claim":
      return abortedClaim(world, step);
  }
}

function counted<T extends string>(world: SimWorld, fault: T, kinds: Set<T>, prefix: string): T {
  if (kinds.has(fault)) world.count(`${prefix}${fault === "not-found" ? "404" : fault}` as never);
  return fault;
}

async function deliverStep(world: SimWorld, step: Extract<Step, { kind: "deliver" }>): Promise<void> {
  const now = world.now();
  const due = world.network.filter((m) => m.dueAt <= now);
  if (due.length === 0) return;
  const index = Math.floor(step.pick * due.length);
  const message = due[index]!;
  if (index > 0) world.count("net-reorder");
  world.network.splice(world.network.indexOf(message), 1);
  switch (step.fault) {
    case "drop":
      world.count("net-drop");
      message.attempts++;
      world.log(`  network dropped ${describe(message)}`);
      return senderRetry(world, message);
    case "delay":
      world.count("net-delay");
      world.network.push({
        ...message,
        dueAt: now + 1_000 + Math.floor(world.stepRandom(step.rand)() * 20_000),
      });
      return;
    case "duplicate":
      world.count("net-duplicate");
      world.network.push({ ...message, dueAt: now });
      return deliverMessage(world, message);
    case "none":
      return deliverMessage(world, message);
  }
}

function describe(message: SimWorld["network"][number]): string {
  return message.kind === "webhook"
    ? `webhook ${message.deliveryId} (${message.state})`
    : `callback ${message.event.type} gen=${message.event.generation} of ${message.workerId}`;
}
