import { sweepOnce } from "../../src/providers/discovery-sweep.js";
import type { JobLister, ListedJob } from "../../src/providers/discovery-types.js";
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
function simLister(world: SimWorld, stale: boolean): JobLister {
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
      const page: ListedJob[] = jobs
        .slice(start, end)
        .map((job) => ({ id: job.plan.id, createdAt: job.createdAt }));
      return end < jobs.length
        ? { kind: "page", jobs: page, resume: String(end), done: false }
        : { kind: "page", jobs: page, resume: query.resume, done: true };
    },
  };
}

/** One discovery sweep of DISCOVERY_PROVIDER, as `finality serve` runs it. */
export async function discoverySweep(world: SimWorld, stale: boolean): Promise<void> {
  const result = await sweepOnce(world.proc.finality, {
    provider: DISCOVERY_PROVIDER,
    lister: simLister(world, stale),
    pagesPerSweep: PAGES_PER_SWEEP,
    lookbackMs: 48 * 3_600_000,
  });
  if (world.power.dead) throw new SimCrash("no answer");
  if (result.adopted > 0)
    world.log(`  discovery adopted ${result.adopted} job(s) in ${result.pages} page(s)`);
}
