import { isoTime } from "../core/iso-time.js";
import { jobToJson } from "../core/job-json.js";
import type { Settlement, SettlementPage, SettlementQuery } from "../store/settlement-feed.js";
import type { Store } from "../store/store.js";

/** The settlement feed's reads, as the stream needs them (a Store has them). */
type SettlementSource = Pick<Store, "readSettlements" | "settlementCommitted">;

export interface FollowOptions extends Omit<SettlementQuery, "limit"> {
  /** Ends the stream (the loop returns) when aborted. */
  signal?: AbortSignal | undefined;
  /** Settlements read at once (100). */
  batch?: number | undefined;
}

/** The public JSON shape of one settlement (HTTP, SSE, `finality settlements --json`). */
export function settlementToJson(settlement: Settlement) {
  return {
    cursor: settlement.cursor,
    provider: settlement.provider,
    id: settlement.id,
    kind: settlement.kind,
    amendment: settlement.amendment,
    state: settlement.state,
    settledAt: isoTime(settlement.settledAt),
    settledBy: settlement.settledBy,
    job: settlement.job === null ? null : jobToJson(settlement.job),
  };
}

/**
 * One read of the feed that waits up to `waitMs` for something new when there is nothing yet
 * (a long poll): answers as soon as a settlement after `query.after` commits, or empty at the
 * deadline or when `signal` aborts.
 */
export async function readSettlementsWaiting(
  source: SettlementSource,
  query: SettlementQuery,
  waitMs: number,
  signal?: AbortSignal,
): Promise<SettlementPage> {
  const deadline = linkedController(signal);
  const timer = setTimeout(() => deadline.abort(), waitMs);
  try {
    for (;;) {
      // Asked for before the read: a commit between the read and the wait still wakes it.
      const woken = source.settlementCommitted(deadline.signal);
      const page = await source.readSettlements(query);
      if (page.items.length > 0 || deadline.signal.aborted) return page;
      await woken;
      if (deadline.signal.aborted) return await source.readSettlements(query);
    }
  } finally {
    clearTimeout(timer);
    deadline.abort();
  }
}

/**
 * Every settlement after `options.after`, in commit order, for as long as the caller iterates:
 * it waits for new commits when it has caught up. `finality.settlements()` and the SSE stream.
 */
export async function* followSettlements(
  source: SettlementSource,
  options: FollowOptions = {},
): AsyncGenerator<Settlement, void, undefined> {
  const { signal, batch, ...filter } = options;
  let after = filter.after;
  while (!signal?.aborted) {
    const turn = linkedController(signal);
    try {
      const woken = source.settlementCommitted(turn.signal);
      const page = await source.readSettlements({ ...filter, after, limit: batch ?? 100 });
      if (page.items.length === 0) {
        await woken;
        continue;
      }
      for (const settlement of page.items) {
        if (signal?.aborted) return;
        after = settlement.cursor;
        yield settlement;
      }
    } finally {
      turn.abort();
    }
  }
}

/** A controller aborted with `parent` (or on its own): Node 20.0 has no AbortSignal.any. */
function linkedController(parent: AbortSignal | undefined): AbortController {
  const controller = new AbortController();
  if (parent?.aborted) controller.abort();
  else parent?.addEventListener("abort", () => controller.abort(), { once: true, signal: controller.signal });
  return controller;
}
