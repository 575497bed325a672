import type { Random } from "../../src/core/clock.js";
import { isFinalityError } from "../../src/core/errors.js";
import type { EventResult } from "../../src/runs/run-callbacks.js";
import type { Claimed } from "../../src/runs/run-claims.js";
import type { WorkerEvent } from "../../src/runs/worker-event.js";
import { type AttemptPlan, SIM, SimCrash } from "./sim-types.js";
import { InvariantViolation, type SimWorld } from "./sim-world.js";

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

/**
 * An end sent with `next` whose answer the worker has not had: it sends the same end again.
 * `firstNext`: what the first call claimed, as the simulator saw it (null: nothing; undefined:
 * unknown, the call crashed).
 */
interface PendingEnd {
  hold: Holding;
  event: WorkerEvent;
  nextPlan: AttemptPlan;
  firstNext: { attemptId: string; runId: string } | null | undefined;
}

/** A worker of the application's own pool: claims, heartbeats, reports through the network. */
export class SimWorker {
  dead = false;
  pausedUntil = 0;
  holding: Holding | null = null;
  pendingEnd: PendingEnd | null = null;
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
    if (worker.pendingEnd) await endWithNext(world, worker, worker.pendingEnd);
    else if (worker.holding) await actOnHolding(world, worker, worker.holding, options);
    else if (options.mayClaim) await claim(world, worker);
  }
}

/** The plan of the next attempt a worker claims. */
function nextPlan(world: SimWorld): AttemptPlan {
  const plans = world.schedule.attemptPlans;
  return plans[world.claims % plans.length]!;
}

async function claim(world: SimWorld, worker: SimWorker): Promise<void> {
  try {
    const plan = nextPlan(world);
    const claimed = await world.proc.runs.claim({
      workerId: worker.id,
      leaseSeconds: SIM.leaseSeconds,
      start: plan.startsWithClaim,
    });
    if (claimed === null || world.power.dead) return;
    take(world, worker, claimed, plan);
  } catch (error) {
    if (!(error instanceof SimCrash)) throw error;
  }
}

/** The worker holds what a claim (or an end's `next`) answered, and handles it by `plan`. */
function take(world: SimWorld, worker: SimWorker, claimed: Claimed, plan: AttemptPlan): void {
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
}

/**
 * An end that claims the worker's next run (`next`), sent until an answer comes. A first answer
 * may be lost (`endAnswerLost`, or a crash): the same end sent again must answer what the first
 * claimed while it holds, else null, and never claim anew (`retried-end-claims-nothing-new`).
 * What a lost answer claimed and no retry handed back is held by no worker: a killed hold, its
 * lease must give it back (refunded when claimed without `start`).
 */
async function endWithNext(world: SimWorld, worker: SimWorker, pending: PendingEnd): Promise<void> {
  const { hold, event } = pending;
  const retry = worker.pendingEnd === pending;
  worker.pendingEnd = pending;
  let result: EventResult;
  try {
    result = await world.proc.runs.recordEvent(hold.attemptId, event, null, {
      leaseSeconds: SIM.leaseSeconds,
      start: pending.nextPlan.startsWithClaim,
    });
  } catch (error) {
    if (error instanceof SimCrash || world.power.dead) {
      world.count("end-answer-lost");
      if (!retry) pending.firstNext = undefined;
      return;
    }
    if (!isFinalityError(error, "stale-generation") && !isFinalityError(error, "not-found")) throw error;
    world.log(`  ${worker.id} end ${event.type} with next → 409 (${String(error.details.reason)})`);
    worker.pendingEnd = null;
    strand(world, worker, pending);
    return;
  }
  const next = result.next ?? null;
  const before = pending.firstNext;
  if (retry && before !== undefined && next !== null && next.attempt.id !== before?.attemptId)
    throw new InvariantViolation({
      invariant: "retried-end-claims-nothing-new",
      detail: `${worker.id} sent its ${event.type} of attempt ${hold.attemptId} again: it claimed ${next.attempt.id} of run ${next.run.id}, where the first call claimed ${before?.attemptId ?? "nothing"}`,
    });
  if (retry && before !== undefined && result.outcome !== "duplicate")
    throw new InvariantViolation({
      invariant: "retried-end-claims-nothing-new",
      detail: `${worker.id}'s ${event.type} of attempt ${hold.attemptId}, sent again after its first committed, answered ${result.outcome}`,
    });
  if (!retry) pending.firstNext = next === null ? null : { attemptId: next.attempt.id, runId: next.run.id };
  world.log(
    `  ${worker.id} end ${event.type} gen=${event.generation} seq=${event.sequence} with next${retry ? " (again)" : ""} → ${result.outcome}, next ${next === null ? "none" : `${next.run.id} gen=${next.attempt.generation}`}`,
  );
  if (world.power.dead) return;
  if (!retry && hold.plan.endAnswerLost) {
    world.count("end-answer-lost");
    return;
  }
  worker.pendingEnd = null;
  if (next === null) strand(world, worker, pending);
  else take(world, worker, next, pending.nextPlan);
}

/** What an end's lost answer claimed, now held by no worker: its lease must give it back. */
function strand(world: SimWorld, worker: SimWorker, pending: PendingEnd): void {
  const first = pending.firstNext;
  if (first === null || first === undefined) return;
  world.count("next-claim-stranded");
  world.killedHolds.push({ workerId: worker.id, ...first, plan: pending.nextPlan, sentAny: false });
}

/** A worker killed while it held an attempt, or while an end of its waited for an answer. */
export function killedWhileHolding(world: SimWorld, worker: SimWorker): void {
  if (worker.holding) world.killedHolds.push({ workerId: worker.id, ...worker.holding });
  if (worker.pendingEnd) {
    world.killedHolds.push({ workerId: worker.id, ...worker.pendingEnd.hold });
    strand(world, worker, worker.pendingEnd);
  }
}

async function actOnHolding(
  world: SimWorld,
  worker: SimWorker,
  hold: Holding,
  options: { mayClaim: boolean; dropHeartbeat?: Random },
): Promise<void> {
  const drop = options.dropHeartbeat;
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
    const end = finalEvent(hold.cancelSeen ? "cancelled" : plan.outcome, worker.id);
    worker.holding = null;
    if (!plan.endClaimsNext || !options.mayClaim) {
      send(world, worker, hold, end);
      return;
    }
    hold.sentAny = true;
    const event = { ...end, generation: hold.generation, sequence: hold.nextSequence++ } as WorkerEvent;
    await endWithNext(world, worker, { hold, event, nextPlan: nextPlan(world), firstNext: null });
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
