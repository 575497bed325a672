import type { Job } from "../../src/core/model.js";
import { canonicalOf, isLiveAttempt, isTerminalRun, LEASE_EXPIRED_CODE } from "../../src/core/run-model.js";
import { engineOf } from "../helpers/engine.js";
import { sinkTarget } from "./effect-sink.js";
import { feedSettledOnce, parkedInboxDrained, type SettledJob } from "./feed-checks.js";
import { endUntold, stuckBy, unknowable } from "./heal.js";
import { ackedKept, allJobs, deliveredJobsAsSettled, effectKeys } from "./invariants.js";
import { kindEffectsOf, noEffectAfterPrune, prunedEffects, resultsBounded } from "./lifecycle-checks.js";
import { key } from "./sim-provider.js";
import { PROVIDERS, SIM } from "./sim-types.js";
import { InvariantViolation, type SimWorld } from "./sim-world.js";

function fail(invariant: string, detail: string): never {
  throw new InvariantViolation({ invariant, detail });
}

/**
 * The deadline by which a job whose true timeline ended must be settled: from the later of the
 * heal, the end of its timeline and its registration, one grace period and one backoff cap,
 * plus one loop tick and the time its lane's rate limit may make it wait behind the others.
 */
export function settleDeadline(
  world: SimWorld,
  endsAt: number,
  registeredAt: number,
  laneJobs: number,
): number {
  const rateWaitMs = Math.ceil((laneJobs * 1000) / SIM.betaRate.perSecond);
  return (
    Math.max(world.healAt, endsAt, registeredAt) + SIM.graceMs + SIM.reconcileMaxMs + SIM.tickMs + rateWaitMs
  );
}

/** The checks at the end of a schedule, after the network healed and every loop drained. */
export async function endChecks(world: SimWorld): Promise<void> {
  const store = engineOf(world.proc.finality).store;
  const jobs = await allJobs(store);
  const byKey = new Map(jobs.map((job) => [key(job.provider, job.id), job]));
  if (world.deferred) throw new InvariantViolation(world.deferred);
  await ackedKept(world, [...world.acked.keys()]);
  effectKeys(world);
  deliveredJobsAsSettled(world, byKey);
  await noEffectAfterPrune(world);
  await withTombstones(world, byKey);
  providerJobs(world, byKey);
  for (const job of jobs) {
    if (job.settledBy === "discovery") world.count("settled-from-list");
    await effectsOf(world, job);
    await kindEffectsOf(world, job);
    resultsBounded(world, job);
  }
  await runsSettled(world, byKey);
  await parkedInboxDrained(world);
  await feedSettledOnce(world, world.feedReaders, settledJobs(world, jobs));
}

/** Every settled job by name: the ledger's with their kinds, the pruned ones' tombstones (kind unknown). */
function settledJobs(world: SimWorld, jobs: Job[]) {
  const settled = new Map<string, SettledJob>();
  for (const job of jobs) if (job.settledAt !== null) settled.set(key(job.provider, job.id), job);
  for (const [name, tombstone] of world.tombstoned) {
    const provider = name.slice(0, name.indexOf("/"));
    settled.set(name, { provider, state: tombstone.state, settledAt: tombstone.settledAt, kind: undefined });
  }
  return settled;
}

function providerJobs(world: SimWorld, byKey: Map<string, Job>): void {
  const lanes = new Map<string, number>(PROVIDERS.map((p) => [p, 0]));
  for (const job of world.truth.jobs.values())
    lanes.set(job.plan.provider, (lanes.get(job.plan.provider) ?? 0) + 1);
  for (const known of world.truth.jobs.values()) {
    const name = key(known.plan.provider, known.plan.id);
    const job = byKey.get(name) ?? world.tombstoned.get(name);
    if (job === undefined && unknowable(world, known.plan)) {
      world.count(world.schedule.config.discover ? "sweep-gap-past-lookback" : "job-unknowable");
      continue;
    }
    const endsAt = world.truth.endsAt(known);
    // A job never registered counts from the heal: the first sweep after it lists the job (the
    // sweep runs every tick, and its budget covers a schedule's few jobs) and makes it due at once.
    const registeredAt = known.plan.neverRegistered ? world.healAt : world.registeredAt.get(name);
    if (registeredAt === undefined) fail("settled-in-time", `${name} was never registered`);
    if (job === undefined) fail("settled-in-time", `${name} is not in the ledger`);
    if (endsAt === null) {
      const openLongEnough = world.now() >= stuckBy(world.healAt, job.submittedAt);
      if (openLongEnough && !job.stuck)
        fail("stuck-alerted-once", `${name} is open since ${rel(job.submittedAt)} and not flagged stuck`);
      continue;
    }
    const final = known.plan.timeline.at(-1)!.state;
    if (job.settledAt === null && endUntold(world, known.plan)) {
      world.count("job-unknowable");
      continue;
    }
    if (job.settledAt === null)
      fail("settled-in-time", `${name} ended (${final}) at ${rel(endsAt)} and is still ${job.state}`);
    if (job.state !== final) fail("settled-correctly", `${name} truly ended ${final} but is ${job.state}`);
    const deadline = settleDeadline(world, endsAt, registeredAt, lanes.get(known.plan.provider) ?? 0);
    if (job.settledAt > deadline)
      fail(
        "settled-in-time",
        `${name} settled at ${rel(job.settledAt)}, after its deadline ${rel(deadline)} (healed at ${rel(world.healAt)})`,
      );
  }
}

async function effectsOf(world: SimWorld, job: Job): Promise<void> {
  const store = engineOf(world.proc.finality).store;
  const rows = (await store.listEffects({ provider: job.provider, jobId: job.id, limit: 100 })).items.filter(
    (e) => e.jobId === job.id,
  );
  const name = key(job.provider, job.id);
  const notify = rows.filter((e) => e.name === "notify");
  const applied = world.sink.appliedFor.get(sinkTarget(job.provider, job.id, "notify", "job.settled")) ?? [];
  if (job.settledAt === null) {
    if (notify.length > 0 || applied.length > 0)
      fail("effects-once-same-key", `${name} is open but has a notify effect`);
  } else {
    if (notify.length !== 1)
      fail("effects-once-same-key", `${name} settled with ${notify.length} notify rows`);
    const row = notify[0]!;
    if (row.status !== "delivered")
      fail("effects-once-same-key", `${name}'s notify is ${row.status} after the heal`);
    if (applied.length !== 1 || applied[0] !== row.idempotencyKey)
      fail(
        "effects-once-same-key",
        `${name}'s notify (key ${row.idempotencyKey}) was applied as [${applied.join(", ")}]`,
      );
    if (row.trigger !== job.state)
      fail("effects-once-same-key", `${name} is ${job.state} but notify fired for ${row.trigger}`);
  }
  const events = await store.jobEvents(job, { limit: 10_000 });
  const flagged = events.some((e) => e.dedupeKey === `stuck:${job.provider}:${job.id}`);
  const alerts = rows.filter((e) => e.name === "alert");
  const alerted = world.sink.appliedFor.get(sinkTarget(job.provider, job.id, "alert", "job.stuck")) ?? [];
  if (flagged !== (alerts.length === 1) || alerts.length > 1)
    fail("stuck-alerted-once", `${name}: flagged stuck ${flagged}, ${alerts.length} alert rows`);
  if (
    flagged &&
    (alerted.length !== 1 || alerted[0] !== alerts[0]?.idempotencyKey || alerts[0]?.status !== "delivered")
  )
    fail("stuck-alerted-once", `${name} was flagged stuck; alerts applied: [${alerted.join(", ")}]`);
}

async function runsSettled(world: SimWorld, byKey: Map<string, Job>): Promise<void> {
  const store = engineOf(world.proc.finality).store;
  for (const runId of world.runIds) {
    const run = await store.getRun(runId);
    if (run === null) fail("runs-settle", `run ${runId} is missing`);
    if (!isTerminalRun(run.status)) fail("runs-settle", `run ${runId} is still ${run.status} after the heal`);
    const mirror = byKey.get(key("runs", runId)) ?? world.tombstoned.get(key("runs", runId));
    if (mirror?.state !== canonicalOf(run.status))
      fail("runs-settle", `run ${runId} is ${run.status} but its job shows ${mirror?.state}`);
    for (const attempt of await store.runAttempts(runId)) {
      if (isLiveAttempt(attempt.status))
        fail(
          "lost-worker-declared-lost",
          `attempt ${attempt.id} of settled run ${runId} is still ${attempt.status}`,
        );
      if (attempt.generation < run.generation && attempt.status === "succeeded")
        fail(
          "no-stale-callback-applied",
          `attempt ${attempt.id} (generation ${attempt.generation} < ${run.generation}) succeeded`,
        );
      if (attempt.generation === run.generation && attempt.status === "released" && run.status === "lost")
        world.count("run-lost-before-start");
      if (
        attempt.status === "lost" &&
        (attempt.error as { code?: string } | null)?.code !== LEASE_EXPIRED_CODE
      )
        fail("lost-worker-declared-lost", `attempt ${attempt.id} is lost without ${LEASE_EXPIRED_CODE}`);
    }
    if (run.status === "succeeded") {
      const last = (await store.runAttempts(runId)).find((a) => a.generation === run.generation);
      if (last?.status !== "succeeded")
        fail(
          "no-stale-callback-applied",
          `run ${runId} succeeded but its generation ${run.generation} attempt is ${last?.status}`,
        );
    }
  }
  // A killed worker's attempt that had started (by a heartbeat, a report, or a claim with
  // `start`) is lost, an attempt spent; one that had not is given back. The second check goes by
  // the worker's own record (it claimed without `start`, and sent nothing), not by the ledger's
  // fields the expiry rule reads.
  for (const killed of world.killedHolds) {
    const attempt = (await store.runAttempts(killed.runId)).find((a) => a.id === killed.attemptId);
    if (attempt === undefined) continue;
    const started = attempt.startedAt !== null || attempt.heartbeatAt !== null;
    if (started && attempt.status === "released")
      fail(
        "lost-worker-declared-lost",
        `attempt ${killed.attemptId} of killed ${killed.workerId} had started but was released, not lost`,
      );
    if (!killed.plan.startsWithClaim && !killed.sentAny && attempt.status === "lost")
      fail(
        "unstarted-attempt-refunded",
        `attempt ${killed.attemptId} of killed ${killed.workerId} was claimed without start and sent no heartbeat nor report, yet was lost (an attempt spent)`,
      );
  }
}

/**
 * Pruned jobs, as their tombstones tell (state, settledAt), for the checks that follow; and
 * `effects-for-every-match` for them from what the receiver applied.
 */
async function withTombstones(world: SimWorld, byKey: Map<string, Job>): Promise<void> {
  const store = engineOf(world.proc.finality).store;
  for (const [name, prunedAt] of world.pruned) {
    if (byKey.has(name)) continue;
    const slash = name.indexOf("/");
    const jobKey = { provider: name.slice(0, slash), id: name.slice(slash + 1) };
    const found = await store.getTombstone(jobKey);
    if (found === null && !world.tombstoneMayBeGone.has(name))
      fail("no-effect-after-prune", `${name} was pruned and has no tombstone`);
    if (found === null) world.count("tombstone-expired");
    else if (found.state !== world.prunedAs.get(name)?.state)
      fail(
        "no-effect-after-prune",
        `${name}'s tombstone says ${found.state}, the job was ${world.prunedAs.get(name)?.state}`,
      );
    // A tombstone that expired with every way back: the job as it was when pruned says the rest.
    const tombstone = found ?? world.prunedAs.get(name)!;
    const plan = world.truth.get(jobKey.provider, jobKey.id)?.plan;
    const registeredAt = world.registeredAt.get(name);
    const kind =
      jobKey.provider === "runs"
        ? "render"
        : registeredAt !== undefined && registeredAt <= prunedAt
          ? plan!.kind
          : null;
    prunedEffects(world, name, tombstone.state, kind);
    world.tombstoned.set(name, { state: tombstone.state, settledAt: tombstone.settledAt } as Job);
  }
}

function rel(at: number): string {
  return `t+${((at - SIM.start) / 1000).toFixed(1)}s`;
}
