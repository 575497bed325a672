import type { Job } from "../../src/core/model.js";
import type { SettlementQuery } from "../../src/store/settlement-feed.js";
import { engineOf } from "../helpers/engine.js";
import { key } from "./sim-provider.js";
import { PROVIDERS } from "./sim-types.js";
import { InvariantViolation, type SimWorld } from "./sim-world.js";

/**
 * `feed-settled-once` (issue 33): the settlement feed, read unfiltered and by each filter, from
 * the start and from a cursor taken in the middle of the schedule, gives each settled job once,
 * in its final state, and misses none, unless retention pruned its settlement. A reader filtered
 * by kind sees a job whose kind arrived after it settled through the feed's amendment, by that
 * final kind (src/store/settlement-feed.ts). The feed has no state filter: each item's state is
 * held to the job's instead.
 */

type Filter = Pick<SettlementQuery, "provider" | "kind">;
const KINDS = ["render", "thumb"] as const;
const FILTERS: Filter[] = [
  {},
  ...[...PROVIDERS, "runs"].map((provider) => ({ provider })),
  ...KINDS.map((kind) => ({ kind })),
  ...PROVIDERS.flatMap((provider) => KINDS.map((kind) => ({ provider, kind }))),
];

/** A settled job as the check knows it; `kind` undefined: pruned, its kind unknown. */
export type SettledJob = Pick<Job, "provider" | "state" | "settledAt"> & { kind: string | null | undefined };

/** One reader: a filter, its cursor, and what it was given, job by job. */
export interface FeedReader {
  filter: Filter;
  after: string | undefined;
  seen: Map<string, { count: number; state: string; amendment: boolean }>;
}

function fail(detail: string): never {
  throw new InvariantViolation({ invariant: "feed-settled-once", detail });
}

export const feedReaders = (): FeedReader[] =>
  FILTERS.map((filter) => ({ filter, after: undefined, seen: new Map() }));

/** Reads each reader's feed from its cursor to the end, a small page at a time. */
export async function readFeeds(world: SimWorld, readers: FeedReader[]): Promise<void> {
  const store = engineOf(world.proc.finality).store;
  for (const reader of readers)
    for (;;) {
      const page = await store.readSettlements({ ...reader.filter, after: reader.after, limit: 7 });
      for (const item of page.items) {
        const name = key(item.provider, item.id);
        const seen = reader.seen.get(name);
        reader.seen.set(name, {
          count: (seen?.count ?? 0) + 1,
          state: item.state,
          amendment: item.amendment,
        });
      }
      reader.after = page.cursor ?? undefined;
      if (page.items.length === 0) break;
    }
}

/**
 * The end check, over the readers resumed from the mid-schedule cursor and fresh ones: `settled`
 * is every settled job by name, from the ledger or (pruned) from its tombstone, kind unknown then.
 */
export async function feedSettledOnce(
  world: SimWorld,
  resumed: FeedReader[],
  settled: Map<string, SettledJob>,
): Promise<void> {
  await readFeeds(world, resumed);
  const fresh = feedReaders();
  await readFeeds(world, fresh);
  for (const reader of [...resumed, ...fresh]) {
    const label = JSON.stringify(reader.filter);
    for (const [name, seen] of reader.seen) {
      const job = settled.get(name);
      if (job === undefined) fail(`${label} gave ${name}, which is not settled`);
      if (seen.count > 1) fail(`${label} gave ${name} ${seen.count} times`);
      if (seen.state !== job.state) fail(`${label} gave ${name} as ${seen.state}; it settled ${job.state}`);
      if (seen.amendment && reader.filter.kind === undefined)
        fail(`${label} gave ${name}'s kind amendment to a reader not filtered by kind`);
      if (job.kind !== undefined && reader.filter.kind !== undefined && job.kind !== reader.filter.kind)
        fail(`${label} gave ${name}, whose kind is ${job.kind}`);
    }
    for (const [name, job] of settled) {
      if (reader.seen.has(name) || !matches(reader.filter, job)) continue;
      if (job.settledAt !== null && job.settledAt < world.settlementsPrunedBefore) {
        world.count("settlement-pruned");
        continue;
      }
      fail(`${label} never gave ${name} (${job.kind ?? "no kind"}, settled ${job.state})`);
    }
  }
}

/** Whether a settled job belongs in a filtered reader's feed; a pruned job's kind is unknown, never owed. */
function matches(filter: Filter, job: { provider: string; kind: string | null | undefined }): boolean {
  if (filter.provider !== undefined && filter.provider !== job.provider) return false;
  if (filter.kind !== undefined) return job.kind === filter.kind;
  return true;
}

/**
 * `parked-inbox-drained` (issue 33): nothing waits in the parked inbox for a job the ledger
 * holds. Every path that creates or registers a job takes what was parked for it.
 */
export async function parkedInboxDrained(world: SimWorld): Promise<void> {
  const store = engineOf(world.proc.finality).store;
  let cursor: string | undefined;
  do {
    const page = await store.listParked({ limit: 200, cursor });
    for (const parked of page.items) {
      const job = await store.getJob({ provider: parked.provider, id: parked.id });
      if (job !== null)
        throw new InvariantViolation({
          invariant: "parked-inbox-drained",
          detail: `${key(parked.provider, parked.id)} is in the ledger (${job.state}) and an observation (${parked.observation.state}) still waits for it`,
        });
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
}
