import { type Random, seededRandom } from "../../src/core/clock.js";
import { isTerminal, type TerminalState } from "../../src/core/states.js";
import {
  describeExtraStep,
  EXTRA_STEP_WEIGHTS,
  effectTiming,
  extraStep,
  payloadPlan,
  registerAfterMs,
  retentionBurst,
} from "./schedule-extra.js";
import { drawSimConfig } from "./sim-config.js";
import { int, weighted } from "./sim-random.js";
import {
  type AttemptPlan,
  DISCOVERY_PROVIDER,
  type JobPlan,
  type NetFault,
  PROVIDERS,
  type Schedule,
  type SenderPlan,
  SIM,
  type Step,
  type TimelineStep,
} from "./sim-types.js";

const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

export { weighted };

const STEP_WEIGHTS = {
  advance: 26,
  "clock-jump": 2,
  submit: 9,
  "enqueue-run": 4,
  deliver: 22,
  reconcile: 8,
  dispatch: 8,
  sweep: 5,
  "arm-crash": 4,
  "arm-crash-after-send": 1.5,
  kill: 1.5,
  "worker-kill": 1.5,
  "worker-pause": 1.5,
  skew: 2,
  "cancel-run": 1,
  // Inserted from a stream of their own (see generateSchedule), not drawn here.
  discover: 0,
  ...EXTRA_STEP_WEIGHTS,
} as const satisfies Record<Step["kind"], number>;

const NET_FAULT_WEIGHTS: Record<NetFault, number> = { none: 70, drop: 10, duplicate: 10, delay: 10 };

/** The schedule for `seed`: small on purpose (a few jobs, runs and workers, 20–60 steps). */
export function generateSchedule(seed: number): Schedule {
  const random = seededRandom(seed);
  // Issue 17's draws (jobs lost from both ends, discovery sweeps) come from a stream of their own,
  // so that the schedules of the other faults stay what they were for every seed.
  const lost = seededRandom(seed ^ 0x17d15c0);
  const jobs = Array.from({ length: int(random, 2, 6) }, (_, i) => jobPlan(random, i, lost));
  // Issue 33's draw, from a stream of its own as well: a progress webhook numbered after the completion.
  const progress = seededRandom(seed ^ 0x33b0d);
  for (const job of jobs)
    job.progressAfterEnd = job.withSeq && isTerminal(job.timeline.at(-1)!.state) && progress() < 0.3;
  const runs = int(random, 0, 3);
  const attemptPlans = Array.from({ length: runs * SIM.maxAttempts + 4 }, () => attemptPlan(random));
  // Claims that start the run (the worker client's way), from a stream of their own too.
  const startWithClaim = seededRandom(seed ^ 0x5ca1d);
  for (const plan of attemptPlans) plan.startsWithClaim = startWithClaim() < 0.4;
  // Where a worker numbers its reports from: the worker client from 1, others from 0 (no
  // sequence is the claim's, even when it starts the run).
  const firstSequence = seededRandom(seed ^ 0x5e90);
  for (const plan of attemptPlans) plan.firstSequence = firstSequence() < 0.3 ? 0 : 1;
  // Ends that claim the worker's next run (`next`), and how often their first answer is lost.
  const endsClaim = seededRandom(seed ^ 0xe2d);
  for (const plan of attemptPlans) {
    plan.endClaimsNext = endsClaim() < 0.4;
    plan.endAnswerLost = endsClaim() < 0.3;
  }
  const workers = runs === 0 ? 0 : int(random, 1, 3);
  const steps: Step[] = [];
  const count = int(random, 20, 60);
  for (let i = 0; i < count; i++) steps.push(step(random, workers));
  // Every job and run is submitted at some point, so that the end checks cover them all.
  for (let i = steps.filter((s) => s.kind === "submit").length; i < jobs.length; i++)
    steps.splice(int(random, 0, steps.length), 0, { kind: "submit" });
  for (let i = steps.filter((s) => s.kind === "enqueue-run").length; i < runs; i++)
    steps.splice(int(random, 0, steps.length), 0, { kind: "enqueue-run" });
  if (random() < 0.4)
    steps.splice(int(random, steps.length >> 1, steps.length), 0, ...retentionBurst(random));
  for (let i = int(lost, 1, 4); i > 0; i--)
    steps.splice(int(lost, 0, steps.length), 0, { kind: "discover", stale: lost() < 0.3 });
  const timing = effectTiming(random);
  const config = drawSimConfig(seed, timing.effectTimeoutMs, timing.effectLeaseMs);
  const effectLeaseMs = config.parsed.effectDelivery.leaseSeconds ?? 4 * (timing.effectTimeoutMs / 1000);
  // Effects handed over by their transactions: a stream of its own as well.
  const handoff = seededRandom(seed ^ 0x4a0d0f);
  return {
    seed,
    ...timing,
    effectLeaseMs: Math.round(effectLeaseMs * 1000),
    effectHandoff: handoff() < 0.5,
    config,
    jobs,
    attemptPlans,
    workers,
    steps,
  };
}

function step(random: Random, workers: number): Step {
  const kind = weighted(random, STEP_WEIGHTS);
  const rand = Math.floor(random() * 2 ** 32);
  switch (kind) {
    case "advance":
      return { kind, ms: int(random, 200, 6_000) };
    case "clock-jump":
      return { kind, ms: int(random, 20_000, 150_000) };
    case "deliver":
      return { kind, pick: random(), fault: weighted(random, NET_FAULT_WEIGHTS), rand };
    case "reconcile":
    case "dispatch":
      return { kind, rand };
    case "arm-crash":
      return { kind, afterTx: int(random, 0, 3), mode: random() < 0.5 ? "before-commit" : "after-commit" };
    case "worker-kill":
      return workers === 0 ? { kind: "kill" } : { kind, worker: int(random, 0, workers - 1) };
    case "worker-pause":
      return workers === 0
        ? { kind: "advance", ms: 1_000 }
        : { kind, worker: int(random, 0, workers - 1), ms: int(random, 5_000, 40_000) };
    case "skew":
      return { kind, ms: int(random, -400_000, 400_000) };
    case "cancel-run":
      return { kind, pick: random() };
    case "sweep":
      return { kind, crashAfter: random() < 0.3 ? int(random, 0, 2) : null };
    case "discover":
      return { kind, stale: false };
    case "retention":
    case "late-webhook":
    case "bad-time":
    case "aborted-claim":
      return extraStep(kind, random, workers);
    case "submit":
    case "enqueue-run":
    case "arm-crash-after-send":
    case "kill":
      return { kind };
  }
}

const FINALS = {
  succeeded: 55,
  failed: 18,
  cancelled: 7,
  expired: 7,
  late: 6,
  never: 7,
} as const;

function jobPlan(random: Random, index: number, lost: Random): JobPlan {
  const provider = pick(random, PROVIDERS);
  const final = weighted(random, FINALS);
  const timeline: TimelineStep[] = [];
  // Only the discovery provider's jobs may be lost from both ends: never registered (the
  // application crashed after submitting), and no webhook at all (its event type not subscribed).
  const discoverable = provider === DISCOVERY_PROVIDER;
  const neverRegistered = discoverable && lost() < 0.25;
  const unsubscribed = discoverable && lost() < 0.2;
  const sender = (): SenderPlan => {
    const drawn = weighted(random, { send: 80, "never-sent": 15, "sent-twice": 5 });
    return unsubscribed ? "never-sent" : drawn;
  };
  if (random() < 0.6) timeline.push({ afterMs: 0, state: "pending", sender: sender() });
  let at = int(random, 500, 8_000);
  timeline.push({ afterMs: at, state: "running", sender: sender() });
  for (let i = int(random, 0, 2); i > 0; i--) {
    at += int(random, 500, 10_000);
    timeline.push({ afterMs: at, state: "running", sender: sender() });
  }
  if (final !== "never") {
    const end =
      final === "late" ? SIM.stuckAfterMs + int(random, 10_000, 100_000) : at + int(random, 1_000, 60_000);
    const state: TerminalState =
      final === "late" ? pick(random, ["succeeded", "failed"] as const) : (final as TerminalState);
    timeline.push({ afterMs: end, state, sender: sender() });
  }
  const withSeq = random() < 0.8;
  const kind = random() < 0.7 ? "render" : "thumb";
  return {
    provider,
    id: `job-${index}`,
    withSeq,
    timeline,
    kind,
    registerAfterMs: registerAfterMs(random, timeline.at(-1)!.afterMs),
    payload: payloadPlan(random),
    neverRegistered,
  };
}

function attemptPlan(random: Random): AttemptPlan {
  return {
    startAfterMs: int(random, 0, 3_000),
    finishAfterMs: int(random, 3_000, 30_000),
    outcome: weighted(random, {
      succeeded: 65,
      "failed-retryable": 17,
      "failed-final": 10,
      cancelled: 8,
    }),
    progressUpdates: int(random, 0, 2),
    diesBeforeStart: random() < 0.08,
    startsWithClaim: false,
    firstSequence: 1,
    endClaimsNext: false,
    endAnswerLost: false,
  };
}

/** One line per step, for traces. */
export function describeStep(step: Step): string {
  switch (step.kind) {
    case "advance":
    case "clock-jump":
      return `${step.kind} +${(step.ms / 1000).toFixed(1)}s`;
    case "deliver":
      return `deliver pick=${step.pick.toFixed(2)} fault=${step.fault}`;
    case "arm-crash":
      return `arm-crash ${step.mode} after ${step.afterTx} more transaction(s)`;
    case "worker-kill":
      return `worker-kill w${step.worker}`;
    case "worker-pause":
      return `worker-pause w${step.worker} ${(step.ms / 1000).toFixed(1)}s`;
    case "skew":
      return `sender clock skew ${(step.ms / 1000).toFixed(0)}s`;
    case "cancel-run":
      return `cancel-run pick=${step.pick.toFixed(2)}`;
    case "discover":
      return step.stale ? "discover (stale list pages)" : "discover";
    case "sweep":
      return step.crashAfter === null
        ? "sweep"
        : `sweep, crashing before the commit of expiry ${step.crashAfter + 1}`;
    default:
      return describeExtraStep(step) ?? step.kind;
  }
}
