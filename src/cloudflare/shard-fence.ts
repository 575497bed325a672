import { FinalityError } from "../core/errors.js";
import type { JobKey } from "../core/model.js";
import type { SqlStorage } from "./cloudflare-types.js";

/**
 * The headers a sharded Worker puts on every request to a ledger object (the object is reachable
 * only through the Worker, so a client cannot set them on the object's side: the Worker drops any
 * it was sent).
 */
export const SHARD_HEADERS = {
  /** The Worker's current shard count. */
  layout: "x-finality-layout",
  /**
   * "current" or "previous": as a member of which layout this object is addressed; "runs": as the
   * home of runs (never moved by a reshard, so never fenced).
   */
  as: "x-finality-as",
  /** A job key (`provider/id`, each URI-encoded): act only if this object already knows the job. */
  existingOnly: "x-finality-existing-only",
  /** Answered by an object that does not know the job it was asked about under existingOnly. */
  notHere: "x-finality-not-here",
  /** Asks for the row cursor of every item of a list page (the Worker merges shards with them). */
  itemCursors: "x-finality-item-cursors",
  /**
   * On a cron run's tick: "here" for the object that runs the discovery sweeps (the runs home),
   * "elsewhere" for every other one; absent (one ledger), the object sweeps on its own.
   */
  sweeps: "x-finality-sweeps",
  /** On a dashboard page: every object that may hold jobs, comma-separated (the page reads them all). */
  shards: "x-finality-shards",
} as const;

export function encodeShardKey(key: JobKey): string {
  return `${encodeURIComponent(key.provider)}/${encodeURIComponent(key.id)}`;
}

function decodeShardKey(text: string): JobKey | null {
  const [provider, id, ...rest] = text.split("/");
  if (provider === undefined || id === undefined || rest.length > 0) return null;
  return { provider: decodeURIComponent(provider), id: decodeURIComponent(id) };
}

/**
 * An object's side of resharding. When a Worker of a newer layout first asks this object, as a
 * member of the layout it drains, whether it knows a job, the object is *retired* for that layout
 * (persisted): from then on it refuses every request that addresses it as a current shard (a
 * Worker still deployed with the old layout), so no job can be created here any more. It answers
 * the question only once every request that came in as a current one has finished, so a job such
 * a request was still creating is seen. Hence a job is created in at most one layout: the new
 * Worker creates a job in the new layout only after the old object, retired, said it does not
 * know it, and a retired object never learns a new job.
 *
 * The mark is never cleared: a Worker that addresses a retired object as current cannot be told
 * apart from one deployed before the reshard, so a count once left is not used again (going from
 * 4 back to 2 would find the 2-shard objects retired; choose a count not used before, e.g. 3).
 */
export class ShardFence {
  readonly #sql: SqlStorage;
  #retiredFor: number | null;
  #currentInFlight = 0;
  #drained: (() => void)[] = [];

  constructor(sql: SqlStorage) {
    this.#sql = sql;
    sql.exec("CREATE TABLE IF NOT EXISTS finality_shard (key TEXT PRIMARY KEY, value INTEGER NOT NULL)");
    const row = sql.exec("SELECT value FROM finality_shard WHERE key = 'retired_for'").toArray()[0];
    this.#retiredFor = typeof row?.value === "number" ? row.value : null;
  }

  /** Runs `answer` for the request under the fence, or answers the refusal itself. */
  async handle(request: Request, answer: (request: Request) => Promise<Response>): Promise<Response> {
    const headers = request.headers;
    const layout = Number(headers.get(SHARD_HEADERS.layout) ?? Number.NaN);
    const as = headers.get(SHARD_HEADERS.as);
    if (as === "runs") return answer(request);
    if (as === "previous") {
      const existing = headers.get(SHARD_HEADERS.existingOnly);
      if (existing !== null && !(await this.#knowsAfterRetiring(existing, layout)))
        return new Response(null, { status: 421, headers: { [SHARD_HEADERS.notHere]: "1" } });
      return answer(request);
    }
    if (this.#retiredFor !== null)
      throw new FinalityError(
        "store-unavailable",
        `this ledger shard was retired by a layout of ${this.#retiredFor} shards; a Worker with the older layout is still deployed`,
        { retryAfterMs: 5_000 },
      );
    this.#currentInFlight++;
    try {
      return await answer(request);
    } finally {
      this.#currentInFlight--;
      if (this.#currentInFlight === 0) for (const resolve of this.#drained.splice(0)) resolve();
    }
  }

  async #knowsAfterRetiring(encodedKey: string, layout: number): Promise<boolean> {
    const key = decodeShardKey(encodedKey);
    if (key === null || !Number.isInteger(layout))
      throw new FinalityError("invalid-request", "bad shard routing headers");
    if (this.#retiredFor !== layout) this.#setRetired(layout);
    if (this.#currentInFlight > 0) await new Promise<void>((resolve) => this.#drained.push(resolve));
    return (
      this.#sql
        .exec(
          `SELECT EXISTS (SELECT 1 FROM jobs WHERE provider = ?1 AND id = ?2)
             OR EXISTS (SELECT 1 FROM tombstones WHERE provider = ?1 AND id = ?2)
             OR EXISTS (SELECT 1 FROM parked WHERE provider = ?1 AND job_id = ?2) AS known`,
          key.provider,
          key.id,
        )
        .toArray()[0]?.known === 1
    );
  }

  #setRetired(layout: number): void {
    this.#retiredFor = layout;
    this.#sql.exec(
      "INSERT INTO finality_shard (key, value) VALUES ('retired_for', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      layout,
    );
  }
}
