import { longestComeBackDays } from "../../src/config/tombstone-cover.js";
import { TIMESTAMP_BOUNDS } from "../../src/core/bounds.js";
import type { Job } from "../../src/core/model.js";
import { DEFAULT_RETENTION, pruneOnce, type RetentionWindows } from "../../src/engine/retention.js";
import type { PruneTarget } from "../../src/store/housekeeping-store.js";
import type { Store } from "../../src/store/store.js";
import { engineOf } from "../helpers/engine.js";
import { simDiscovery } from "./sim-config.js";
import { deliverMessage } from "./sim-network.js";
import { key, observedFields } from "./sim-provider.js";
import { survive } from "./sim-steps.js";
import { DISCOVERY_PROVIDER, type Step } from "./sim-types.js";
import { InvariantViolation, type Message, type SimWorld } from "./sim-world.js";

const DAY_MS = 86_400_000;

/**
 * Retention in the middle of a schedule, with a settled-jobs window of seconds: jobs settled
 * that long ago whose effects are all delivered go, each leaving its tombstone. The tombstones'
 * window is as short as the jobs' (issue 33: windows that never went through the config check),
 * so only the pass's own rule keeps a tombstone while its job can come back. The other windows
 * stay as deployed (days), so the events the end checks read are kept.
 */
export async function retentionPass(
  world: SimWorld,
  step: Extract<Step, { kind: "retention" }>,
): Promise<void> {
  const store = engineOf(world.proc.finality).store;
  const days = step.windowMs / DAY_MS;
  const windows = passWindows(world, days);
  const candidates = [
    ...[...world.truth.jobs.values()].map((j) => ({ provider: j.plan.provider, id: j.plan.id })),
    ...world.runIds.map((id) => ({ provider: "runs", id })),
  ].filter((job) => !world.pruned.has(key(job.provider, job.id)));
  // Pruned is what was in the ledger before the pass and is not after it (tombstones are checked
  // at the end: reading them here would hide a store that never writes or never reads them).
  const before: Job[] = [];
  for (const job of candidates) {
    const record = await store.getJob(job);
    if (record !== null) before.push(record);
  }
  const now = world.now();
  const pass = tombstoneWindowOnly() ? withTombstonesPrunedAfter(store, now - days * DAY_MS) : store;
  await survive(world, () => pruneOnce(pass, windows, now));
  // Even a pass cut short may have pruned the tombstones it was allowed to.
  for (const [name, job] of world.prunedAs)
    if (tombstoneMayGo(world, windows, job, now)) world.tombstoneMayBeGone.add(name);
  if (world.power.dead) return;
  world.settlementsPrunedBefore = Math.max(
    world.settlementsPrunedBefore,
    now - windows.settlementsDays * DAY_MS,
  );
  await parkedExpired(world, store);
  for (const job of before) {
    if ((await store.getJob(job)) !== null) continue;
    const name = key(job.provider, job.id);
    world.pruned.set(name, world.now());
    world.prunedAs.set(name, job);
    world.count("retention-pruned");
    world.log(`  pruned ${name}`);
    if (tombstoneMayGo(world, windows, job, now)) world.tombstoneMayBeGone.add(name);
  }
}

/**
 * Whether a pass at `now` may prune `job`'s tombstone: its own window (`tombstonesDays`, counted
 * from the settlement) has passed, and so has every way the simulator has of bringing the job back
 * (a sender's redelivery within `deliveriesDays` of the job's end, a sweep's lookback). Deliberately
 * not the pass's own rule (engine/retention.ts), which keeps tombstones longer: the checker asks
 * for the promise, not for the implementation. A pass run late (a paused process, a clock jump)
 * can prune a job and its tombstone together once all of that lies in the past.
 */
function tombstoneMayGo(world: SimWorld, windows: RetentionWindows, job: Job, now: number): boolean {
  if (job.settledAt === null) return false;
  const swept = job.provider === DISCOVERY_PROVIDER;
  const lookbackMs = swept ? (simDiscovery(world.schedule.config.parsed)?.lookbackMs ?? 0) : 0;
  const openFor = Math.max(windows.tombstonesDays * DAY_MS, windows.deliveriesDays * DAY_MS, lookbackMs);
  return now - job.settledAt >= openFor;
}

/**
 * The windows of a pass. Library windows: what a library's own loop may pass, never checked (the
 * step's window for jobs and tombstones alike; the pass's own rule must keep the tombstones). Checked
 * windows: the schedule's configuration as `finality serve` runs it, with its ways back.
 */
function passWindows(world: SimWorld, days: number): RetentionWindows {
  const { parsed, retention } = world.schedule.config;
  const configured = { ...DEFAULT_RETENTION, ...parsed.retention };
  if (retention === "checked-windows") return { ...configured, comeBackDays: longestComeBackDays(parsed) };
  // A library that runs discovery sweeps itself tells the pass their lookback (docs/library.md).
  const lookbackMs = simDiscovery(parsed)?.lookbackMs;
  const comeBackDays = lookbackMs === undefined ? undefined : lookbackMs / DAY_MS;
  return { ...configured, settledJobsDays: days, tombstonesDays: days, comeBackDays };
}

/**
 * Observations parked longer than `parkedDays` go (the inbox's promise ends there): what a pass
 * took is no longer owed to the job's registration. Their events stay (acked-webhook-kept).
 */
async function parkedExpired(world: SimWorld, store: Store): Promise<void> {
  for (const name of world.parkedStates.keys()) {
    if (world.registeredAt.has(name)) continue;
    const slash = name.indexOf("/");
    const left = await store.listParked({
      provider: name.slice(0, slash),
      id: name.slice(slash + 1),
      limit: 500,
    });
    const expected = world.parkedStates.get(name) ?? [];
    if (left.items.length >= expected.length) continue;
    // Some or all expired (a pass can take the older ones and keep the newer): what is still
    // parked is what the registration owes the job.
    world.count("parked-expired");
    world.log(`  ${expected.length - left.items.length} parked observation(s) of ${name} expired`);
    if (left.items.length === 0) world.parkedStates.delete(name);
    else
      world.parkedStates.set(
        name,
        left.items.map((item) => item.observation.state),
      );
  }
}

/**
 * The mutant `tombstone-window-only` (test/sim/mutant-retention.test.ts): the pass before issue
 * 33, which pruned tombstones after `tombstonesDays` alone, so with the jobs' window they went
 * in the same pass as their jobs.
 */
const tombstoneWindowOnly = () => process.env.FINALITY_SIM_MUTANT === "tombstone-window-only";
function withTombstonesPrunedAfter(store: Store, before: number): Store {
  return Object.assign(Object.create(store) as Store, {
    prune: (target: PruneTarget, at: number, limit: number) =>
      store.prune(target, target === "tombstones" ? before : at, limit),
  });
}

/**
 * A late webhook, a replay (same delivery id) or a redelivery of a job's last step, most often
 * for a job retention already pruned: each must be `already-settled-pruned` there, and fire nothing.
 */
export function lateWebhook(world: SimWorld, step: Extract<Step, { kind: "late-webhook" }>): void {
  const pruned = [...world.pruned.keys()].filter((k) => !k.startsWith("runs/"));
  const all = [...world.truth.jobs.keys()];
  const pool = pruned.length > 0 && step.pick < 0.75 ? pruned : all;
  const job = world.truth.jobs.get(pool[Math.floor(((step.pick * 4) % 1) * pool.length)]!);
  if (job === undefined || job.emitted === 0) return;
  // Senders retry for at most `retention.deliveriesDays` (the window the config check holds the
  // tombstones to): a redelivery later than that is outside the promise, so none is sent.
  const endsAt = world.truth.endsAt(job);
  const retryWindowMs = world.schedule.config.parsed.retention.deliveriesDays * DAY_MS;
  if (endsAt !== null && world.now() > endsAt + retryWindowMs) {
    world.count("late-webhook-past-retry-window");
    return;
  }
  const last = step.how === "late-running" ? 0 : job.emitted - 1;
  const index =
    step.how === "late-running" ? job.plan.timeline.findIndex((s) => s.state === "running") : last;
  const at = job.plan.timeline[index]!;
  const base = `wh_${job.plan.provider}_${job.plan.id}_${index + 1}`;
  const deliveryId = step.how === "replay" ? base : `${base}_late${world.trace.length}`;
  world.network.push({
    kind: "webhook",
    provider: job.plan.provider,
    jobId: job.plan.id,
    deliveryId,
    state: at.state,
    fields: observedFields(job, index, world.skewMs),
    attempts: 0,
    dueAt: world.now(),
  });
  world.log(`  sender ${step.how === "replay" ? "replays" : "sends late"} ${deliveryId} (${at.state})`);
}

/** What a 2xx answer tells the simulator: a parked observation to find applied later, a pruned job hit. */
export function noteOutcome(
  world: SimWorld,
  message: Extract<Message, { kind: "webhook" }>,
  outcome: string,
): void {
  const name = key(message.provider, message.jobId);
  if (outcome === "parked") {
    world.count("parked");
    world.parkedStates.set(name, [...(world.parkedStates.get(name) ?? []), message.state]);
  }
  if (outcome === "already-settled-pruned") {
    if (!world.pruned.has(name))
      throw new InvariantViolation({
        invariant: "no-effect-after-prune",
        detail: `${name} answered already-settled-pruned but was never pruned`,
      });
    world.count("webhook-after-prune");
  }
}

const BAD_TIMES = {
  min: new Date(TIMESTAMP_BOUNDS.minMs).toISOString(),
  max: new Date(TIMESTAMP_BOUNDS.maxMs).toISOString(),
  below: new Date(TIMESTAMP_BOUNDS.minMs - 1).toISOString(),
  above: new Date(TIMESTAMP_BOUNDS.maxMs + 1).toISOString(),
  huge: "+200000-01-01T00:00:00.000Z",
} as const;

/**
 * A webhook whose `updateTime` is exactly at a bound (accepted like any other) or beyond one
 * (`time-bounds-refused`: answered 400, and nothing about the job changes, no event kept).
 */
export async function badTimeWebhook(
  world: SimWorld,
  step: Extract<Step, { kind: "bad-time" }>,
): Promise<void> {
  const jobs = [...world.truth.jobs.values()];
  const job = jobs[Math.floor(step.pick * jobs.length)];
  const truth = job ? world.truth.stateAt(job, world.now()) : null;
  if (!job || !truth) return;
  const inBounds = step.at === "min" || step.at === "max";
  world.count(inBounds ? "time-at-bound" : "time-out-of-bounds");
  const store = engineOf(world.proc.finality).store;
  const before = await store.getJob(job.plan);
  const deliveryId = `wh_${job.plan.provider}_${job.plan.id}_time${world.trace.length}`;
  const message: Extract<Message, { kind: "webhook" }> = {
    kind: "webhook",
    provider: job.plan.provider,
    jobId: job.plan.id,
    deliveryId,
    state: truth.step.state,
    fields: { ...observedFields(job, truth.index, 0), updateTime: BAD_TIMES[step.at] },
    attempts: 0,
    dueAt: world.now(),
    probe: inBounds ? "at-bound" : "out-of-bounds",
  };
  await deliverMessage(world, message);
  if (inBounds || world.power.dead) return;
  const after = await store.getJob(job.plan);
  const events = await store.jobEvents(job.plan, { limit: 10_000 });
  if (after?.version !== before?.version || events.some((e) => e.deliveryId === deliveryId))
    throw new InvariantViolation({
      invariant: "time-bounds-refused",
      detail: `${key(job.plan.provider, job.plan.id)}: a webhook at ${BAD_TIMES[step.at]} changed the job (version ${before?.version} → ${after?.version}) or left an event`,
    });
}
