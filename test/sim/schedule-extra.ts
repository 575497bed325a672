import type { Random } from "../../src/core/clock.js";
import type { PayloadPlan, Step } from "./sim-types.js";

/**
 * The draws behind the defect classes the first simulator never reached (issue 15): result sizes
 * and depths, registration before, during and after settlement, retention in the middle of a
 * schedule with late webhooks after it, timestamps at and beyond the bounds, effect timeouts and
 * leases from their valid range, and claims whose client goes away.
 */

const int = (random: Random, min: number, max: number) => min + Math.floor(random() * (max - min + 1));

/**
 * Mostly a few bytes; sometimes over the 512 KB bound (600 KB to 3.5 MB), or 100 to 20,000 levels
 * deep (the bound is 64). Clear of the bounds on purpose, so the end check knows what was kept.
 */
export function payloadPlan(random: Random): PayloadPlan {
  const r = random();
  if (r < 0.05) return { shape: "large", bytes: int(random, 600_000, 3_500_000) };
  if (r < 0.1) return { shape: "deep", depth: int(random, 100, 20_000) };
  return { shape: "small" };
}

/** When the application registers a job, after its submission: at once, mid-timeline, or after its end. */
export function registerAfterMs(random: Random, endsAfterMs: number): number {
  const r = random();
  if (r < 0.55) return 0;
  if (r < 0.8) return int(random, 0, Math.max(1, endsAfterMs));
  return endsAfterMs + int(random, 500, 120_000);
}

/** The delivery timeout (1–30 s) and a lease longer than it (up to 4× + 5 s). */
export function effectTiming(random: Random): { effectTimeoutMs: number; effectLeaseMs: number } {
  const effectTimeoutMs = int(random, 1_000, 30_000);
  return { effectTimeoutMs, effectLeaseMs: int(random, effectTimeoutMs + 1, 4 * effectTimeoutMs + 5_000) };
}

export const EXTRA_STEP_WEIGHTS = {
  retention: 4,
  "late-webhook": 3,
  "bad-time": 1.5,
  "aborted-claim": 1.5,
} as const;

type ExtraKind = keyof typeof EXTRA_STEP_WEIGHTS;

export function extraStep(kind: ExtraKind, random: Random, workers: number): Step {
  switch (kind) {
    case "retention":
      // Short windows: jobs settled a few seconds ago go, with their tombstones left.
      return { kind, windowMs: int(random, 0, 30_000) };
    case "late-webhook": {
      const how = (["replay", "late-running", "late-terminal"] as const)[int(random, 0, 2)]!;
      return { kind, pick: random(), how };
    }
    case "bad-time": {
      const at = (["min", "max", "below", "above", "huge"] as const)[int(random, 0, 4)]!;
      return { kind, pick: random(), at };
    }
    case "aborted-claim":
      return workers === 0
        ? { kind: "advance", ms: 1_000 }
        : { kind, worker: int(random, 0, workers - 1), during: random() < 0.5 };
  }
}

/**
 * A retention burst, inserted in the second half of some schedules: the outbox is drained (a
 * pass prunes only jobs whose effects are delivered), retention runs with a window of seconds,
 * and late webhooks and replays follow for what it pruned.
 */
export function retentionBurst(random: Random): Step[] {
  return [
    { kind: "advance", ms: int(random, 2_000, 20_000) },
    { kind: "dispatch", rand: Math.floor(random() * 2 ** 32) },
    { kind: "dispatch", rand: Math.floor(random() * 2 ** 32) },
    { kind: "retention", windowMs: int(random, 0, 5_000) },
    { kind: "late-webhook", pick: random(), how: random() < 0.5 ? "replay" : "late-terminal" },
    { kind: "late-webhook", pick: random(), how: "late-running" },
    { kind: "deliver", pick: 0.99, fault: "none", rand: 0 },
    { kind: "deliver", pick: 0.99, fault: "none", rand: 0 },
  ];
}

/** One line for a trace. */
export function describeExtraStep(step: Step): string | null {
  switch (step.kind) {
    case "retention":
      return `retention pass, settled jobs kept ${(step.windowMs / 1000).toFixed(1)}s`;
    case "late-webhook":
      return `late webhook (${step.how}) pick=${step.pick.toFixed(2)}`;
    case "bad-time":
      return `webhook with updateTime ${step.at} bound, pick=${step.pick.toFixed(2)}`;
    case "aborted-claim":
      return `w${step.worker} long-poll claim aborted ${step.during ? "while it commits" : "while it waits"}`;
    default:
      return null;
  }
}
