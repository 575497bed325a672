import type { Random } from "../../src/core/clock.js";
import { isFinalityError } from "../../src/core/errors.js";
import type { WorkerEvent } from "../../src/runs/worker-event.js";
import { type AttemptPlan, SIM, SimCrash } from "./sim-types.js";
import type { SimWorld } from "./sim-world.js";

interface Holding {
  attemptId: string;
  runId: string;
  generation: number;
  claimedAt: number;
  plan: AttemptPlan;
  nextSequence: number;
  startedSent: boolean;
  progressSent: number;
  nextHeartbeatAt: number;
  cancelSeen: boolean;
  /**
   * A heartbeat or a report of this hold was sent (it may have reached the server). While
   * false, the server has heard nothing from the worker since the claim.
   */
  sentAny: boolean;
}

/** A worker of the application's own pool: claims, heartbeats, reports through the network. */
export class SimWorker {
  dead = false;
  pausedUntil = 0;
  holding: Holding | null = null;
  /** Restarts after dying before its first heartbeat: each incarnation has its own id. */
  incarnation = 0;
  constructor(readonly name: string) {}
  get id(): string {
    return this.incarnation === 0 ? this.name : `${this.name}.${this.incarnation}`;
  }
}

/** Attempts whose worker was killed while it held them: each must end up not live (lost, released). */
export interface KilledHold {
  workerId: string;
  attemptId: string;
  runId: string;
  plan: AttemptPlan;
  sentAny: boolean;
}

const HEARTBEAT_EVERY_MS = (SIM.leaseSeconds * 1000) / 3;

/**
 * Each live, unpaused worker does what is due: callbacks whose time has come (before its
 * heartbeat, as a worker resuming from a pause would), then its heartbeat; an idle one claims.
 * `dropHeartbeat` drops a heartbeat on the way (chaos only).
 */
export async function workersAct(
  world: SimWorld,
  workers: SimWorker[],
  options: { mayClaim: boolean; dropHeartbeat?: Random },
): Promise<void> {
  for (const worker of workers) {
    if (worker.dead || world.now() < worker.pausedUntil || world.power.dead) continue;
    if (worker.holding) await actOnHolding(world, worker, worker.holding, options.dropHeartbeat);
    else if (options.mayClaim) await claim(world, worker);
  }
}

async function claim(world: SimWorld, worker: SimWorker): Promise<void> {
  try {
    const plans = world.schedule.attemptPlans;
    const plan = plans[world.claims % plans.length]!;
    const claimed = await world.proc.runs.claim({
      workerId: worker.id,
      leaseSeconds: SIM.leaseSeconds,
      start: plan.startsWithClaim,
    });
    if (claimed === null || world.power.dead) return;
    world.claims++;
    worker.holding = {
      attemptId: claimed.attempt.id,
      runId: claimed.run.id,
      generation: claimed.attempt.generation,
      claimedAt: world.now(),
      plan,
      // A claim that started the run took no sequence: the worker numbers from where it likes.
      nextSequence: plan.firstSequence,
      startedSent: plan.startsWithClaim,
      progressSent: 0,
      nextHeartbeatAt: world.now() + HEARTBEAT_EVERY_MS,
      cancelSeen: false,
      sentAny: false,
    };
    world.log(
      `  ${worker.id} claimed ${claimed.run.id} gen=${claimed.attempt.generation} plan=${plan.outcome}${plan.startsWithClaim ? " (started with the claim)" : ""}`,
    );
    if (plan.diesBeforeStart) {
      // It crashes on its input before its first heartbeat; its supervisor starts a fresh one.
      world.count("worker-died-before-start");
      world.killedHolds.push({ workerId: worker.id, ...worker.holding });
      world.log(`  ${worker.id} died before its first heartbeat`);
      worker.holding = null;
      worker.incarnation++;
    }
  } catch (error) {
    if (!(error instanceof SimCrash)) throw error;
  }
}

async function actOnHolding(world: SimWorld, worker: SimWorker, hold: Holding, drop?: Random): Promise<void> {
  const now = world.now();
  const { plan } = hold;
  const startAt = hold.claimedAt + plan.startAfterMs;
  const finishAt = hold.claimedAt + plan.finishAfterMs;
  if (!hold.startedSent && now >= startAt) {
    hold.startedSent = true;
    send(world, worker, hold, { type: "started" });
  }
  while (
    hold.startedSent &&
    hold.progressSent < plan.progressUpdates &&
    now >= startAt + ((hold.progressSent + 1) * (finishAt - startAt)) / (plan.progressUpdates + 1)
  ) {
    hold.progressSent++;
    send(world, worker, hold, { type: "progress", progress: { step: hold.progressSent } });
  }
  if (now >= finishAt || hold.cancelSeen) {
    send(world, worker, hold, finalEvent(hold.cancelSeen ? "cancelled" : plan.outcome, worker.id));
    worker.holding = null;
    return;
  }
  if (now < hold.nextHeartbeatAt) return;
  hold.nextHeartbeatAt = now + HEARTBEAT_EVERY_MS;
  if (drop && drop() < 0.08) {
    world.count("heartbeat-dropped");
    return;
  }
  hold.sentAny = true;
  try {
    const beat = await world.proc.runs.heartbeat(hold.attemptId, { generation: hold.generation });
    if (beat.run.cancelRequested) hold.cancelSeen = true;
  } catch (error) {
    if (error instanceof SimCrash) return;
    if (!isFinalityError(error, "stale-generation")) throw error;
    world.log(
      `  ${worker.id} heartbeat refused (${String(error.details.reason)}): drops ${hold.runId} gen=${hold.generation}`,
    );
    worker.holding = null;
  }
}

type EventBody = Omit<WorkerEvent, "generation" | "sequence">;

function finalEvent(outcome: AttemptPlan["outcome"], workerId: string): EventBody {
  switch (outcome) {
    case "succeeded":
      return { type: "succeeded", output: { by: workerId } };
    case "failed-retryable":
      return { type: "failed", error: { message: "boom" } };
    case "failed-final":
      return { type: "failed", error: { message: "fatal", retryable: false } };
    case "cancelled":
      return { type: "cancelled" };
  }
}

function send(world: SimWorld, worker: SimWorker, hold: Holding, body: EventBody): void {
  hold.sentAny = true;
  world.network.push({
    kind: "callback",
    workerId: worker.id,
    runId: hold.runId,
    attemptId: hold.attemptId,
    event: { ...body, generation: hold.generation, sequence: hold.nextSequence++ } as WorkerEvent,
    attempts: 0,
    dueAt: world.now(),
  });
}
