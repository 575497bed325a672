import { sweepOnce } from "../../src/providers/discovery-sweep.js";
import type { JobLister, ListedJob } from "../../src/providers/discovery-types.js";
import { acmePolled, simDiscovery } from "./sim-config.js";
import { DISCOVERY_PROVIDER, SimCrash } from "./sim-types.js";
import type { SimWorld } from "./sim-world.js";

/** Jobs per list page of the simulated provider, and list calls one sweep may make. */
const PAGE = 2;
const PAGES_PER_SWEEP = 3;
/** How far behind a stale list page is. */
const STALE_MS = 30_000;

/**
 * The simulated provider's list API, in the generic shape: its jobs in creation order, `PAGE` at
 * a time, the cursor a count. A stale page shows the provider as it was `STALE_MS` ago: jobs
 * created since are missing from it, as a lagging replica of a list API would answer.
 */
function simLister(world: SimWorld, stale: boolean, withState: boolean, listed: Set<string>): JobLister {
  return {
    kinds: [],
    async list(query) {
      if (world.power.dead) throw new SimCrash("no answer");
      const asOf = stale ? world.now() - STALE_MS : world.now();
      const jobs = [...world.truth.jobs.values()].filter(
        (job) => job.plan.provider === DISCOVERY_PROVIDER && job.createdAt <= asOf,
      );
      if (
        stale &&
        jobs.length <
          [...world.truth.jobs.values()].filter((j) => j.plan.provider === DISCOVERY_PROVIDER).length
      )
        world.count("list-page-stale");
      const start = query.resume === null ? 0 : Number(query.resume);
      const end = start + PAGE;
      // Within the sweep's reach, whatever page the sweep asks for: on the list as it answers and
      // created within the lookback. (Not the pages asked for: a cursor kept wrong must not
      // make a job look out of reach.)
      for (const job of jobs)
        if (job.createdAt >= query.sinceMs) listed.add(`${job.plan.provider}/${job.plan.id}`);
      const page: ListedJob[] = jobs.slice(start, end).map((job) => ({
        id: job.plan.id,
        createdAt: job.createdAt,
        // Without polling, the list's state is what a sweep settles a job by.
        ...(withState ? { state: world.truth.stateAt(job, asOf)?.step.state ?? "pending" } : {}),
      }));
      return end < jobs.length
        ? { kind: "page", jobs: page, resume: String(end), done: false }
        : { kind: "page", jobs: page, resume: query.resume, done: true };
    },
  };
}

/** One discovery sweep of DISCOVERY_PROVIDER, as `finality serve` runs it, with the drawn lookback. */
export async function discoverySweep(world: SimWorld, stale: boolean): Promise<void> {
  const discovery = simDiscovery(world.schedule.config.parsed);
  if (discovery === null) return;
  const listed = new Set<string>();
  const result = await sweepOnce(world.proc.finality, {
    provider: DISCOVERY_PROVIDER,
    lister: simLister(world, stale, !acmePolled(world.schedule.config.parsed), listed),
    pagesPerSweep: PAGES_PER_SWEEP,
    lookbackMs: discovery.lookbackMs,
    // As serve sets it: an instance that cannot be polled settles a job from the list.
    settleFromList: !acmePolled(world.schedule.config.parsed),
  });
  if (world.power.dead) throw new SimCrash("no answer");
  for (const job of listed) world.listedInReach.add(job);
  if (result.adopted > 0)
    world.log(`  discovery adopted ${result.adopted} job(s) in ${result.pages} page(s)`);
}

/**
 * `finality serve`'s discovery loop: a sweep `discover.intervalSeconds` after the previous one
 * ended, or after the process started (the loop does not sweep at start). Time moves in steps
 * here, so the sweep due comes at the first step at or after its time: a long step (a clock
 * jump, a paused process) delays it as a paused process would.
 */
export async function dueSweep(world: SimWorld): Promise<void> {
  const discovery = simDiscovery(world.schedule.config.parsed);
  if (discovery === null || world.power.dead || world.now() < world.nextSweepAt) return;
  try {
    await discoverySweep(world, false);
  } finally {
    world.nextSweepAt = world.now() + discovery.intervalMs;
  }
}
