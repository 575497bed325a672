import { TIMESTAMP_BOUNDS } from "../../src/core/bounds.js";
import type { Random } from "../../src/core/clock.js";
import type { Job } from "../../src/core/model.js";
import { isTerminal } from "../../src/core/states.js";
import type { PollResult } from "../../src/engine/poller.js";
import { schemaDatedObservation } from "./sim-answers.js";
import { payloadFields } from "./sim-payload.js";
import { type JobPlan, type PollFault, SIM, type TimelineStep } from "./sim-types.js";

/** A job as the provider knows it: its plan and when it was created there. */
export interface ProviderJob {
  plan: JobPlan;
  createdAt: number;
  /** Timeline steps whose webhook the sender has already handed to the network. */
  emitted: number;
}

export interface TrueState {
  index: number;
  step: TimelineStep;
}

/** The provider's hidden truth: which step of its timeline each job is at, at time `now`. */
export class SimProviderTruth {
  readonly jobs = new Map<string, ProviderJob>();

  add(plan: JobPlan, now: number): void {
    this.jobs.set(key(plan.provider, plan.id), { plan, createdAt: now, emitted: 0 });
  }

  get(provider: string, id: string): ProviderJob | undefined {
    return this.jobs.get(key(provider, id));
  }

  stateAt(job: ProviderJob, now: number): TrueState | null {
    let found: TrueState | null = null;
    job.plan.timeline.forEach((step, index) => {
      if (job.createdAt + step.afterMs <= now) found = { index, step };
    });
    return found;
  }

  /** When the job's timeline reaches its terminal step, or null if it never does. */
  endsAt(job: ProviderJob): number | null {
    const last = job.plan.timeline.at(-1);
    return last && isTerminal(last.state) ? job.createdAt + last.afterMs : null;
  }
}

export function key(provider: string, id: string): string {
  return `${provider}/${id}`;
}

/** The fields an observation of timeline step `index` carries, seen through a clock `skewMs` off. */
export function observedFields(job: ProviderJob, index: number, skewMs: number) {
  const step = job.plan.timeline[index]!;
  const updateTime = job.createdAt + step.afterMs + skewMs;
  return {
    state: step.state,
    ...(job.plan.withSeq ? { seq: index + 1 } : {}),
    updateTime: Math.max(0, Math.floor(updateTime / 1000) * 1000),
  };
}

export interface PollerHooks {
  truth: SimProviderTruth;
  now(): number;
  advance(ms: number): void;
  /** Throws when the process is down: a dead process polls nothing. */
  assertAlive(): void;
  /** The fault for the next poll ("ok" in the heal phase). */
  nextFault(): PollFault;
  random: Random;
  /** The provider's clock skew, for the updateTime it reports. */
  skewMs(): number;
  log(line: string): void;
}

/**
 * An in-process Poller answering from the hidden timeline at the simulated time, or with the
 * fault drawn for this poll: an older step (stale), a timeout after the time allowed (slow),
 * 503, 429 with Retry-After, `running` again after a terminal state (regress), or 404.
 */
export function simPoller(hooks: PollerHooks) {
  return async (job: Job): Promise<PollResult> => {
    hooks.assertAlive();
    const known = hooks.truth.get(job.provider, job.id);
    const truth = known ? hooks.truth.stateAt(known, hooks.now()) : null;
    if (!known || !truth) return { kind: "not-found" };
    const fault = hooks.nextFault();
    const answer = await answerPoll(hooks, job, known, truth, fault);
    const seen =
      answer.kind === "observed"
        ? `${answer.observation.state} seq=${answer.observation.seq ?? "-"}`
        : answer.kind;
    hooks.log(`  poll ${job.provider}/${job.id} → ${seen}${fault === "ok" ? "" : ` (${fault})`}`);
    return answer;
  };
}

async function answerPoll(
  hooks: PollerHooks,
  job: Job,
  known: ProviderJob,
  truth: TrueState,
  fault: PollFault,
): Promise<PollResult> {
  const observed = (index: number, override?: { state: string; seq?: number }): PollResult => ({
    kind: "observed",
    observation: {
      provider: job.provider,
      id: job.id,
      source: "reconcile",
      ...observedFields(known, index, hooks.skewMs()),
      ...payloadFields(known.plan, override?.state ?? known.plan.timeline[index]!.state),
      ...override,
      rawState: override?.state ?? known.plan.timeline[index]!.state,
    },
  });
  switch (fault) {
    case "ok":
      return observed(truth.index);
    case "stale":
      return observed(Math.floor(hooks.random() * (truth.index + 1)));
    case "slow":
      hooks.advance(SIM.pollTimeoutMs);
      throw new Error("The operation was aborted due to timeout");
    case "failing":
      return { kind: "failed", error: "status API answered 503", status: 503 };
    case "429":
      return {
        kind: "failed",
        error: "status API answered 429",
        status: 429,
        retryAfterMs: 1_000 + Math.floor(hooks.random() * (SIM.maxRetryAfterMs - 1_000)),
      };
    case "regress":
      if (!isTerminal(truth.step.state)) return observed(truth.index);
      return observed(truth.index, {
        state: "running",
        ...(known.plan.withSeq ? { seq: truth.index + 2 } : {}),
      });
    case "not-found":
      return { kind: "not-found" };
    case "bad-time": {
      // An answer dated outside 2000–2200: a failed poll that changes nothing about the job.
      const answer = observed(truth.index);
      if (answer.kind !== "observed") return answer;
      // A third of them dated as OpenAI's schema allows a batch to be (sim-answers.ts).
      if (hooks.random() < 1 / 3)
        return { ...answer, observation: schemaDatedObservation(answer.observation, hooks.random) };
      const updateTime = hooks.random() < 0.5 ? TIMESTAMP_BOUNDS.minMs - 1 : TIMESTAMP_BOUNDS.maxMs + 1;
      return { ...answer, observation: { ...answer.observation, updateTime } };
    }
  }
}
