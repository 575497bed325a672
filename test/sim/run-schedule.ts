import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { endChecks } from "./end-checks.js";
import { feedReaders, parkedInboxDrained, readFeeds } from "./feed-checks.js";
import { heal } from "./heal.js";
import { StepChecker } from "./invariants.js";
import { describeStep } from "./schedule.js";
import { runStep } from "./sim-steps.js";
import { type FaultKind, type Schedule, SIM } from "./sim-types.js";
import { SimWorker } from "./sim-workers.js";
import { InvariantViolation, SimWorld, type Violation } from "./sim-world.js";

export interface ScheduleResult {
  seed: number;
  violation: Violation | null;
  /** Index of the chaos step after which the violation was seen; null when at the heal or the end. */
  failedAtStep: number | null;
  chaosSteps: number;
  healTicks: number;
  faults: Map<FaultKind, number>;
  /** The configuration's buckets, one per dimension (sim-config.ts). */
  configBuckets: readonly string[];
  restarts: number;
  transactions: number;
  checks: number;
  jobs: number;
  runs: number;
  effectsApplied: number;
  acked: number;
  trace: string[];
}

/** A database file on tmpfs when there is one: a real file that survives the process's "crash". */
export function simDatabasePath(name: string): string {
  const dir = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();
  return join(dir, `finality-sim-${process.pid}-${name}.db`);
}

/** Runs one schedule against the real engine: its chaos steps, then the heal, then the end checks. */
export async function runSchedule(schedule: Schedule, path: string): Promise<ScheduleResult> {
  const world = new SimWorld(schedule, path);
  for (let i = 0; i < schedule.workers; i++) world.workers.push(new SimWorker(`w${i}`));
  const checker = new StepChecker();
  let violation: Violation | null = null;
  let failedAtStep: number | null = null;
  let healTicks = 0;
  let index = 0;
  try {
    for (; index < schedule.steps.length; index++) {
      const step = schedule.steps[index]!;
      world.log(`#${index} t+${((world.now() - SIM.start) / 1000).toFixed(1)}s ${describeStep(step)}`);
      await runStep(world, step);
      const restarted = await world.restartIfDead();
      await checker.afterStep(world, restarted);
      // Mid-schedule: the feed's readers take their cursors, to resume from at the end.
      if (index === schedule.steps.length >> 1) await midSchedule(world);
    }
    failedAtStep = null;
    healTicks = await heal(world, checker);
    await endChecks(world);
  } catch (error) {
    if (index < schedule.steps.length) failedAtStep = index;
    violation =
      error instanceof InvariantViolation
        ? error.violation
        : { invariant: "crashed-simulator", detail: String((error as Error)?.stack ?? error) };
    world.log(`VIOLATION ${violation.invariant}: ${violation.detail}`);
  }
  const result: ScheduleResult = {
    seed: schedule.seed,
    violation,
    failedAtStep,
    chaosSteps: Math.min(index + 1, schedule.steps.length),
    healTicks,
    faults: world.faults,
    configBuckets: schedule.config.buckets,
    restarts: world.restarts,
    transactions: world.power.transactions,
    checks: checker.checks,
    jobs: world.truth.jobs.size,
    runs: world.runIds.length,
    effectsApplied: world.sink.appliedKeys.size,
    acked: world.acked.size,
    trace: world.trace,
  };
  await world.close().catch(() => {});
  return result;
}

async function midSchedule(world: SimWorld): Promise<void> {
  world.feedReaders = feedReaders();
  await readFeeds(world, world.feedReaders);
  await parkedInboxDrained(world);
}

/**
 * Shrinks a failing schedule: removes chunks of steps, then jobs, as long as the same invariant
 * still fails (delta debugging). Deterministic, so `--seed N` shrinks to the same trace every time.
 */
export async function shrink(
  schedule: Schedule,
  violation: Violation,
  path: string,
  budget = 400,
): Promise<Schedule> {
  let best = schedule;
  const fails = async (candidate: Schedule) => {
    budget--;
    const result = await runSchedule(candidate, path);
    return result.violation?.invariant === violation.invariant;
  };
  // Until nothing more can go: chunks of steps (halving), then single jobs.
  for (let progress = true; progress && budget > 0; ) {
    progress = false;
    for (
      let chunk = Math.ceil(best.steps.length / 2);
      chunk >= 1 && budget > 0;
      chunk = Math.floor(chunk / 2)
    ) {
      for (let i = 0; i < best.steps.length && budget > 0; ) {
        const candidate = { ...best, steps: [...best.steps.slice(0, i), ...best.steps.slice(i + chunk)] };
        if (await fails(candidate)) {
          best = candidate;
          progress = true;
        } else i += chunk;
      }
    }
    for (let j = best.jobs.length - 1; j >= 0 && budget > 0; j--) {
      const candidate = { ...best, jobs: best.jobs.filter((_, k) => k !== j) };
      if (await fails(candidate)) {
        best = candidate;
        progress = true;
      }
    }
  }
  return best;
}
