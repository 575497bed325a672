import type { Job } from "../../src/core/model.js";
import { isTerminal, rankOf } from "../../src/core/states.js";
import type { Store } from "../../src/store/store.js";
import { engineOf } from "../helpers/engine.js";
import { sinkTarget } from "./effect-sink.js";
import { noEffectAfterPrune } from "./lifecycle-checks.js";
import { key } from "./sim-provider.js";
import { InvariantViolation, type SimWorld } from "./sim-world.js";

export const INVARIANTS = [
  "monotonic",
  "settled-in-time",
  "settled-correctly",
  "effects-once-same-key",
  "acked-webhook-kept",
  "stuck-alerted-once",
  "lost-worker-declared-lost",
  "unstarted-attempt-refunded",
  "callback-heard",
  "no-stale-callback-applied",
  "runs-settle",
  "no-5xx",
  "effects-for-every-match",
  "no-effect-after-prune",
  "parked-applied-on-register",
  "no-parallel-delivery",
  "time-bounds-refused",
  "results-bounded",
  "aborted-claim-claims-nothing",
  "retried-end-claims-nothing-new",
  "feed-settled-once",
  "parked-inbox-drained",
  "delivered-job-as-settled",
  "crashed-simulator",
] as const;
export type InvariantName = (typeof INVARIANTS)[number];

function fail(invariant: InvariantName, detail: string): never {
  throw new InvariantViolation({ invariant, detail });
}

export async function allJobs(store: Store): Promise<Job[]> {
  const jobs: Job[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.listJobs({ limit: 500, cursor });
    jobs.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return jobs;
}

/** The checks run after every step: what must never be false, even for a moment. */
export class StepChecker {
  private readonly seen = new Map<string, { state: string; version: number }>();
  checks = 0;

  async afterStep(world: SimWorld, restarted: boolean): Promise<void> {
    if (world.deferred) throw new InvariantViolation(world.deferred);
    if (world.power.dead) return;
    const store = engineOf(world.proc.finality).store;
    // First: a pruned job brought back would otherwise be reported as a monotonicity break.
    await noEffectAfterPrune(world);
    await this.monotonic(await allJobs(store));
    const keys = restarted ? [...world.acked.keys()] : world.ackedToVerify.splice(0);
    await ackedKept(world, keys);
    effectKeys(world);
  }

  private async monotonic(jobs: Job[]): Promise<void> {
    this.checks++;
    for (const job of jobs) {
      const key = `${job.provider}/${job.id}`;
      const before = this.seen.get(key);
      if (before !== undefined) {
        if (rankOf(job.state) < rankOf(before.state))
          fail("monotonic", `${key} went from ${before.state} down to ${job.state}`);
        if (isTerminal(before.state) && job.state !== before.state)
          fail("monotonic", `${key} was ${before.state} (terminal) and is now ${job.state}`);
        if (job.version < before.version)
          fail("monotonic", `${key} version went back from ${before.version} to ${job.version}`);
      }
      this.seen.set(key, { state: job.state, version: job.version });
    }
  }
}

/** Every observation whose sender got a 2xx has its event row, whatever crashed since. */
export async function ackedKept(world: SimWorld, keys: readonly string[]): Promise<void> {
  const store = engineOf(world.proc.finality).store;
  const byJob = new Map<string, Set<string>>();
  for (const key of keys) {
    const acked = world.acked.get(key);
    if (acked === undefined) continue;
    const job = `${acked.provider}\u0000${acked.jobId}`;
    byJob.set(job, (byJob.get(job) ?? new Set()).add(acked.deliveryId));
  }
  for (const [job, ids] of byJob) {
    const [provider, id] = job.split("\u0000") as [string, string];
    const events = await store.jobEvents({ provider, id }, { limit: 10_000 });
    const recorded = new Set(events.map((e) => e.deliveryId));
    for (const deliveryId of ids)
      if (!recorded.has(deliveryId))
        fail(
          "acked-webhook-kept",
          `webhook ${deliveryId} for ${provider}/${id} was answered 200 but has no event`,
        );
  }
}

/**
 * A settlement's effect delivers the job as it settled: its terminal state, when and how, the same
 * as the ledger holds (the first terminal state is final, so no later write changes them). A job
 * retention pruned since is not compared.
 */
export function deliveredJobsAsSettled(world: SimWorld, byKey: ReadonlyMap<string, Job>): void {
  for (const d of world.sink.deliveries) {
    if (d.type !== "job.settled") continue;
    const target = sinkTarget(d.provider, d.jobId, d.effect, d.type);
    if (d.settledAt === null || !isTerminal(d.jobState))
      fail(
        "delivered-job-as-settled",
        `${target} (attempt ${d.attempt}) delivered the job ${d.jobState}, unsettled`,
      );
    const stored = byKey.get(key(d.provider, d.jobId));
    if (stored === undefined) continue;
    const delivered = `${d.jobState} at ${d.settledAt} by ${d.settledBy}`;
    const held = `${stored.state} at ${stored.settledAt} by ${stored.settledBy}`;
    if (delivered !== held)
      fail(
        "delivered-job-as-settled",
        `${target} (attempt ${d.attempt}) delivered ${delivered}; the ledger holds ${held}`,
      );
  }
}

/** An effect is always delivered under one key; the receiver applies one key per effect. */
export function effectKeys(world: SimWorld): void {
  const keyOf = new Map<string, string>();
  for (const d of world.sink.deliveries) {
    const target = sinkTarget(d.provider, d.jobId, d.effect, d.type);
    const known = keyOf.get(target);
    if (known !== undefined && known !== d.key)
      fail("effects-once-same-key", `${target} delivered under two keys: ${known} and ${d.key}`);
    keyOf.set(target, d.key);
  }
  for (const [target, keys] of world.sink.appliedFor)
    if (keys.length > 1) fail("effects-once-same-key", `${target} applied ${keys.length} times`);
  // A broker effect: the broker stores each key once (JetStream's Nats-Msg-Id, Redis's guard),
  // however often a lost ack or a doubled publish sent it.
  const stored = new Set<string>();
  for (const { key, effect } of world.broker.stream) {
    if (stored.has(key)) fail("effects-once-same-key", `the broker stored ${effect} key ${key} twice`);
    stored.add(key);
  }
}
