import type { EffectStatus, Job } from "../core/model.js";
import type { ParkedObservation } from "../store/lifecycle-store.js";
import type { Page, Store } from "../store/store.js";
import { type EffectsView, loadEffects } from "./effects-page.js";
import { type JobsFilter, loadJobs } from "./jobs-page.js";
import { loadOverview, type OverviewData } from "./overview-data.js";
import { loadParked } from "./parked-page.js";

interface ParkedListQuery {
  provider?: string | undefined;
  cursor?: string | undefined;
}

/**
 * Where the dashboard's overview, jobs, effects and parked pages read from. On Node (and on a
 * single ledger object) it is the store itself; a sharded Workers ledger gives one that merges
 * every shard's reads (src/cloudflare/shard-dashboard.ts), with its own cursors. The pages render
 * the same from either.
 */
export interface DashboardReads {
  overview(now: number, providers: readonly string[]): Promise<OverviewData>;
  jobs(filter: JobsFilter, providers: readonly string[]): Promise<Page<Job>>;
  effects(status: EffectStatus | null, cursor: string | undefined): Promise<EffectsView>;
  parked(query: ParkedListQuery): Promise<Page<ParkedObservation>>;
  /** The longest cursor the pages pass on (a merged cursor holds one per shard). */
  readonly cursorMaxLength: number;
}

/** The store's cursors are one row number each. */
const STORE_CURSOR_MAX_LENGTH = 200;

/** The reads of one store: what the dashboard always did. */
export function storeReads(store: Store): DashboardReads {
  return {
    overview: (now, providers) => loadOverview(store, now, providers),
    jobs: (filter, providers) => loadJobs(store, filter, providers),
    effects: (status, cursor) => loadEffects(store, status, cursor),
    parked: (query) => loadParked(store, query),
    cursorMaxLength: STORE_CURSOR_MAX_LENGTH,
  };
}
