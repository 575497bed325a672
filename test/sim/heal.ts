import { isTerminalRun } from "../../src/core/run-model.js";
import { isTerminal } from "../../src/core/states.js";
import { engineOf } from "../helpers/engine.js";
import type { StepChecker } from "./invariants.js";
import { acmePolled } from "./sim-config.js";
import { discoverySweep } from "./sim-discovery.js";
import { deliverMessage } from "./sim-network.js";
import { afterTime, survive } from "./sim-steps.js";
import { DISCOVERY_PROVIDER, type JobPlan, SIM } from "./sim-types.js";
import { SimWorker } from "./sim-workers.js";
import type { SimWorld } from "./sim-world.js";

/**
 * Time after which a job that never ends must have been flagged stuck: one backoff cap after it
 * became stuck or after the heal, whichever is later (a poll claimed before a crash keeps the job
 * for the claim's lease, which is shorter than the cap), plus ticks.
 */
export const stuckBy = (healAt: number, submittedAt: number) =>
  Math.max(healAt, submittedAt + SIM.stuckAfterMs) + SIM.reconcileMaxMs + 2 * SIM.tickMs;

/**
 * The network heals: no more drops, skew, crashes or provider faults; one healthy worker joins.
 * The loops then run like `finality serve` runs them, tick by tick, except that the clock skips
 * ticks in which nothing is due. Ends when everything has settled, or at the cap, after which
 * the end checks report what did not.
 */
export async function heal(world: SimWorld, checker: StepChecker): Promise<number> {
  world.phase = "heal";
  world.power.armed = null;
  world.crashAfterNextSend = false;
  if (await world.restartIfDead()) await checker.afterStep(world, true);
  world.healAt = world.now();
  world.skewMs = 0;
  world.log(`heal at t+${((world.healAt - SIM.start) / 1000).toFixed(1)}s`);
  if (world.runIds.length > 0 || world.pendingEnqueues.length > 0)
    world.workers.push(new SimWorker("w-heal"));
  let ticks = 0;
  for (;;) {
    ticks++;
    for (const message of world.network.splice(0).sort((a, b) => a.dueAt - b.dueAt)) {
      if (message.dueAt <= world.now()) await deliverMessage(world, message);
      else world.network.push(message);
    }
    await afterTime(world, { mayClaim: true });
    await survive(world, () => world.proc.runs.sweepOnce());
    if (world.schedule.config.discover) await survive(world, () => discoverySweep(world, false));
    await survive(world, () => world.proc.reconciler.runOnce());
    await survive(world, () => world.proc.dispatcher.runOnce());
    await checker.afterStep(world, false);
    if (await settled(world)) return ticks;
    if (world.now() - world.healAt > SIM.healCapMs) return ticks;
    const next = await nextDue(world);
    const tick =
      Math.ceil((Math.max(next, world.now() + 1) - SIM.start) / SIM.tickMs) * SIM.tickMs + SIM.start;
    world.clock.set(tick);
  }
}

/**
 * A job nothing can tell Finality about: never registered, no webhook of it acknowledged that
 * creates it (under `registered-only` a webhook only parks), and no completed discovery sweep that
 * listed it while it was within the sweep's lookback. The promise is for jobs Finality can know
 * of. A sweep comes later than `discover.intervalSeconds` after the previous one when the process
 * restarts (its loop waits a whole interval) or pauses: at the smallest legal lookback, a job
 * created just after a sweep can then be out of reach of the next (counted
 * `sweep-gap-past-lookback`, and reported: the config check's floor does not cover those gaps).
 */
export function unknowable(world: SimWorld, plan: JobPlan): boolean {
  if (!plan.neverRegistered) return false;
  if (world.schedule.config.discover && world.listedInReach.has(`${plan.provider}/${plan.id}`)) return false;
  const adopts = world.schedule.config.parsed.providers[plan.provider]?.unknownJobs !== "registered-only";
  return !(
    adopts && [...world.acked.values()].some((a) => a.provider === plan.provider && a.jobId === plan.id)
  );
}

/**
 * Discovery without polling (acme.polling off): a job whose end no acknowledged webhook told. A
 * sweep settles a job it adopts from the state the list shows, but leaves a known job alone, and
 * nothing polls it: a job adopted open whose completion webhooks were all lost stays open. The
 * promise there is for the ends Finality was told of; one it was told of (a 200, parked or not)
 * must be applied.
 */
export function endUntold(world: SimWorld, plan: JobPlan): boolean {
  if (plan.provider !== DISCOVERY_PROVIDER || acmePolled(world.schedule.config.parsed)) return false;
  return ![...world.acked.values()].some(
    (a) => a.provider === plan.provider && a.jobId === plan.id && isTerminal(a.state),
  );
}

async function settled(world: SimWorld): Promise<boolean> {
  if (world.network.length > 0 || world.pendingRegistrations.length > 0 || world.pendingEnqueues.length > 0)
    return false;
  if (world.workers.some((w) => !w.dead && w.holding !== null)) return false;
  const store = engineOf(world.proc.finality).store;
  const now = world.now();
  for (const job of world.truth.jobs.values()) {
    const endsAt = world.truth.endsAt(job);
    if (endsAt !== null && endsAt > now) return false;
    const record = await store.getJob(job.plan);
    if (record === null && unknowable(world, job.plan)) continue;
    if (record === null) return false;
    if (endsAt !== null && record.settledAt === null && endUntold(world, job.plan)) continue;
    if (endsAt === null ? now < stuckBy(world.healAt, record.submittedAt) : record.settledAt === null)
      return false;
  }
  for (const status of ["pending", "delivering"] as const)
    if ((await store.listEffects({ status, limit: 1 })).items.length > 0) return false;
  for (const runId of world.runIds) {
    const run = await store.getRun(runId);
    if (run === null || !isTerminalRun(run.status)) return false;
  }
  return true;
}

/** The earliest time anything is due: a message, a timeline step, a poll, an effect, a lease, a run, a worker. */
async function nextDue(world: SimWorld): Promise<number> {
  const store = engineOf(world.proc.finality).store;
  const times: number[] = world.network.map((m) => m.dueAt);
  for (const registration of world.pendingRegistrations) times.push(registration.at);
  for (const job of world.truth.jobs.values()) {
    for (const step of job.plan.timeline) times.push(job.createdAt + step.afterMs);
    if (world.truth.endsAt(job) === null) {
      const record = await store.getJob(job.plan);
      if (record) times.push(stuckBy(world.healAt, record.submittedAt));
    }
  }
  for (const job of (await store.listJobs({ open: true, limit: 500 })).items)
    if (job.nextCheckAt !== null) times.push(job.nextCheckAt);
  for (const effect of (await store.listEffects({ status: "pending", limit: 500 })).items)
    times.push(effect.nextAttemptAt);
  for (const effect of (await store.listEffects({ status: "delivering", limit: 500 })).items)
    if (effect.leaseUntil !== null) times.push(effect.leaseUntil);
  // The earliest lease still held: every held lease is due by the end of time.
  const [lease] = await store.dueLeases(Number.MAX_SAFE_INTEGER, 1);
  if (lease) times.push(lease.leaseExpiresAt);
  for (const run of (await store.listRuns({ status: "queued", limit: 500 })).items)
    times.push(run.availableAt);
  for (const worker of world.workers) {
    if (worker.dead) continue;
    times.push(worker.pausedUntil);
    const hold = worker.holding;
    if (hold) {
      const start = hold.claimedAt + hold.plan.startAfterMs;
      const finish = hold.claimedAt + hold.plan.finishAfterMs;
      times.push(hold.nextHeartbeatAt, start, finish);
      for (let k = 1; k <= hold.plan.progressUpdates; k++)
        times.push(start + (k * (finish - start)) / (hold.plan.progressUpdates + 1));
    }
  }
  const now = world.now();
  // A message handed to the network in this tick (a webhook the sender emitted after the
  // deliveries ran) is due now: the next tick delivers it, as a live sender sends at once,
  // instead of the clock skipping to the next future time and holding it till then.
  if (world.network.some((m) => m.dueAt <= now)) return now + 1;
  const future = times.filter((t) => t > now);
  return future.length === 0 ? now + SIM.tickMs : Math.min(...future);
}
