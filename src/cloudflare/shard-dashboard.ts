import { FinalityError } from "../core/errors.js";
import type { EffectStatus, Job } from "../core/model.js";
import { type DashboardReads, storeReads } from "../dashboard/dashboard-reads.js";
import { EFFECT_PAGE_ROWS, type EffectsView, SUMMARY_ROWS } from "../dashboard/effects-page.js";
import type { JobsFilter } from "../dashboard/jobs-page.js";
import { type OverviewParts, overviewFromParts, readOverviewParts } from "../dashboard/overview-data.js";
import { PARKED_PAGE_ROWS } from "../dashboard/parked-page.js";
import type { ParkedObservation } from "../store/lifecycle-store.js";
import type { Page, Store } from "../store/store.js";
import type { DurableObjectNamespace, DurableObjectState, SqlStorage } from "./cloudflare-types.js";
import { itemCursorsOf } from "./item-cursors.js";
import { SHARD_HEADERS } from "./shard-fence.js";
import { type CombinedCursor, combinedNext, decodeCombined, mergePages } from "./shard-lists.js";
import { mergeOverviewParts, sum } from "./shard-overview-merge.js";

/** Where the dashboard's home shard asks every shard for its part of a page (POST, JSON). */
export const DASHBOARD_PART_PATH = "/__finality/dashboard";

/** What a page needs from one shard; a list's cursor is the shard's own. */
type PartQuery =
  | { page: "overview"; now: number; providers: string[] }
  | { page: "jobs"; filter: JobsFilter; providers: string[] }
  /** cursor null: the counts only (this shard's list is read to its end). */
  | { page: "effects"; status: EffectStatus | null; cursor: string | null }
  | { page: "parked"; provider: string | undefined; cursor: string | undefined };

interface ListPart<T> {
  items: T[];
  nextCursor: string | null;
  /** The cursor right after each item: a merged page takes a prefix of each shard's page. */
  itemCursors: (string | null)[];
}

interface EffectsPart {
  counts: EffectsView["counts"];
  sections: {
    status: EffectStatus;
    page: ListPart<EffectsView["sections"][number]["page"]["items"][number]>;
  }[];
}

/** One shard's part of a page, from its own store (the object answers DASHBOARD_PART_PATH with it). */
async function readDashboardPart(store: Store, sql: SqlStorage, query: PartQuery): Promise<unknown> {
  const reads = storeReads(store);
  const withCursors = <T extends object>(path: string, page: Page<T>): ListPart<T> => ({
    ...page,
    itemCursors: itemCursorsOf(sql, path, page.items),
  });
  switch (query.page) {
    case "overview":
      return readOverviewParts(store, query.now, query.providers);
    case "jobs":
      return withCursors("/v1/jobs", await reads.jobs(query.filter, query.providers));
    case "effects": {
      const view = await reads.effects(query.status, query.cursor ?? undefined);
      return {
        counts: view.counts,
        sections: view.sections.map(({ status, page }) => ({
          status,
          page:
            query.cursor === null
              ? { items: [], nextCursor: null, itemCursors: [] }
              : withCursors("/v1/effects", page),
        })),
      } satisfies EffectsPart;
    }
    case "parked":
      return withCursors(
        "/v1/parked",
        await reads.parked({ provider: query.provider, cursor: query.cursor }),
      );
  }
}

export async function answerDashboardPart(
  store: Store,
  sql: SqlStorage,
  request: Request,
): Promise<Response> {
  if (request.method !== "POST") return new Response(null, { status: 405 });
  return Response.json(await readDashboardPart(store, sql, (await request.json()) as PartQuery));
}

interface ShardedReadsOptions {
  /** Every object that may hold jobs, as the Worker names them (its router's shardNames()). */
  shards: readonly string[];
  /** This object's own store and database: its part is read here, not through a request to itself. */
  store: Store;
  sql: SqlStorage;
  isSelf: (name: string) => boolean;
  namespace: DurableObjectNamespace;
}

/**
 * The dashboard's reads over every shard, for the object that renders the pages (the Worker sends
 * them to the first current shard, which checks the session, CSRF and cross-site rules as ever).
 * Each page asks every shard for its part at once and merges: counts summed, lists merged newest
 * first with a combined cursor that holds each shard's own (as the API's merged lists do), so a
 * page never repeats or skips an item. A shard that does not answer fails the page (503).
 */
function shardedDashboardReads(options: ShardedReadsOptions): DashboardReads {
  const { shards } = options;
  const part = async <T>(name: string, query: PartQuery): Promise<T> => {
    if (options.isSelf(name)) return (await readDashboardPart(options.store, options.sql, query)) as T;
    const stub = options.namespace.get(options.namespace.idFromName(name));
    let response: Response;
    try {
      response = await stub.fetch(
        new Request(`https://finality.internal${DASHBOARD_PART_PATH}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(query),
        }),
      );
    } catch (error) {
      throw unavailable(name, error);
    }
    if (response.status === 400) {
      await response.arrayBuffer();
      throw new FinalityError("invalid-request", "cursor is not one this server gave out", {
        details: { field: "cursor" },
      });
    }
    if (!response.ok) throw unavailable(name, `${response.status} ${await response.text()}`);
    return (await response.json()) as T;
  };
  /** The shards a combined cursor still has items on, each with its own cursor. */
  const openShards = (cursor: CombinedCursor) =>
    shards.filter((name) => cursor[name] !== null).map((name) => ({ name, at: cursor[name] || undefined }));

  return {
    cursorMaxLength: 200 * shards.length,

    async overview(now, providers) {
      const parts = await Promise.all(
        shards.map((name) => part<OverviewParts>(name, { page: "overview", now, providers: [...providers] })),
      );
      return overviewFromParts(mergeOverviewParts(parts));
    },

    async jobs(filter, providers) {
      const ask = (name: string, cursor: string | undefined) =>
        part<ListPart<Job>>(name, { page: "jobs", filter: { ...filter, cursor }, providers: [...providers] });
      if (filter.q !== undefined) {
        // One key per provider: found on at most one shard each; shown in the providers' order.
        const found = (await Promise.all(shards.map((name) => ask(name, undefined)))).flatMap((p) => p.items);
        found.sort((a, b) => providers.indexOf(a.provider) - providers.indexOf(b.provider));
        return { items: found, nextCursor: null };
      }
      const cursor = decodeCombined(filter.cursor ?? null, shards);
      const read = await Promise.all(
        openShards(cursor).map(async ({ name, at }) => ({ name, page: await ask(name, at) })),
      );
      const { items, next } = mergePages(read, cursor, filter.limit, "submittedAt");
      return { items, nextCursor: combinedNext(shards, next) };
    },

    async effects(status, combined) {
      const cursor = decodeCombined(status === null ? null : (combined ?? null), shards);
      const parts = await Promise.all(
        shards.map(async (name) => ({
          name,
          part: await part<EffectsPart>(name, {
            page: "effects",
            status,
            cursor: cursor[name] === null ? null : cursor[name] || "",
          }),
        })),
      );
      const counts = Object.fromEntries(
        Object.keys(parts[0]?.part.counts ?? {}).map((s) => [
          s,
          sum(parts.map((p) => p.part.counts[s as EffectStatus])),
        ]),
      ) as EffectsView["counts"];
      const statuses = parts[0]?.part.sections.map((s) => s.status) ?? [];
      const sections = statuses.map((s, i) => {
        const read = parts
          .filter((p) => cursor[p.name] !== null)
          .map((p) => ({ name: p.name, page: p.part.sections[i]?.page ?? emptyPart() }));
        const limit = status === null ? SUMMARY_ROWS : EFFECT_PAGE_ROWS;
        const { items, next } = mergePages(read, cursor, limit, "createdAt");
        return { status: s, page: { items, nextCursor: combinedNext(shards, next) } };
      });
      return { status, cursor: combined, counts, sections };
    },

    async parked(query) {
      const cursor = decodeCombined(query.cursor ?? null, shards);
      const read = await Promise.all(
        openShards(cursor).map(async ({ name, at }) => ({
          name,
          page: await part<ListPart<ParkedObservation>>(name, {
            page: "parked",
            provider: query.provider,
            cursor: at,
          }),
        })),
      );
      const { items, next } = mergePages(read, cursor, PARKED_PAGE_ROWS, "parkedAt");
      return { items, nextCursor: combinedNext(shards, next) };
    },
  };
}

/** An object name of a layout or the runs home: nothing else is fanned out to. */
const LEDGER_NAME = /^ledger(-\d{1,4}-of-\d{1,4})?$/;

/**
 * The dashboard's reads for the object of `ctx`, per request: over every shard the Worker names in
 * SHARD_HEADERS.shards (it sends the pages that show every shard with the list of its layouts,
 * which the Worker knows: an object's own configuration may be another deploy's); undefined
 * without it (the one ledger object, reached with no router in front), so the page reads the
 * object's own store as it always did. The Worker drops the header from every client request.
 */
export function dashboardReadsOf(
  ctx: DurableObjectState,
  env: Readonly<Record<string, unknown>>,
): ((store: Store) => (request: Request) => DashboardReads | undefined) | undefined {
  const namespace = env.FINALITY_LEDGER as DurableObjectNamespace | undefined;
  if (namespace === undefined) return undefined;
  const self = ctx.id === undefined ? null : String(ctx.id);
  return (store) => (request) => {
    const shards = (request.headers.get(SHARD_HEADERS.shards) ?? "")
      .split(",")
      .filter((n) => LEDGER_NAME.test(n));
    if (shards.length < 2) return undefined;
    return shardedDashboardReads({
      shards,
      store,
      sql: ctx.storage.sql,
      isSelf: (name) => self !== null && String(namespace.idFromName(name)) === self,
      namespace,
    });
  };
}

function emptyPart<T>(): ListPart<T> {
  return { items: [], nextCursor: null, itemCursors: [] };
}

function unavailable(name: string, why: unknown): FinalityError {
  return new FinalityError("store-unavailable", `ledger shard ${name} did not answer: ${String(why)}`, {
    retryAfterMs: 1_000,
  });
}
