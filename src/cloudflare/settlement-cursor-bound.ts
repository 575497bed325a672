import { FinalityError, isFinalityError } from "../core/errors.js";
import { problemResponse, toProblem } from "../http/problem.js";
import { settlementNumber } from "../store/settlement-feed.js";
import type { Store } from "../store/store.js";
import type { SqlStorage } from "./cloudflare-types.js";

/**
 * A settlement cursor is a position in one ledger object's feed, and its checksum guards against
 * accidents (a cursor cut short, mistyped), not forgery: anyone can write a well-formed one. A
 * forged position before the end costs nothing (the client reads again what its token lets it
 * read anyway); one past the end would read as "nothing yet" until the object's numbers caught up
 * with it, and every settlement in between would be skipped without a word. No cursor this server
 * gave can point there (settlement numbers are AUTOINCREMENT: never reused, never lowered, even
 * when retention deletes the newest rows), so such a position is refused, 400 naming `after`.
 */
function highestSettlementNumber(sql: SqlStorage): number {
  const row = sql.exec("SELECT seq FROM sqlite_sequence WHERE name = 'settlements'").toArray()[0];
  return typeof row?.seq === "number" ? row.seq : 0;
}

function pastTheEnd(position: number, highest: number, field: string): FinalityError {
  return new FinalityError(
    "invalid-request",
    `${field}: not a settlement cursor this server gave (position ${position} is past this ledger's newest settlement, ${highest})`,
    { details: { field } },
  );
}

/** `store` whose settlement reads refuse a cursor past the object's newest settlement. */
export function withSettlementCursorBound(store: Store, sql: SqlStorage): Store {
  return {
    ...store,
    // Async: a bad cursor rejects the read, as the store's own reads do, never throws at the call.
    async readSettlements(query) {
      const position = settlementNumber(query.after);
      const highest = highestSettlementNumber(sql);
      if (position > highest) throw pastTheEnd(position, highest, "after");
      return store.readSettlements(query);
    },
  };
}

/**
 * For a stream request (`/v1/settlements/stream`), the 400 its cursor earns, before the stream
 * starts: read through `app` as a one-item page from the same cursor (so the API token is checked
 * first, and an unauthenticated client learns nothing of the feed's length); null when the page
 * is answered, or refused for another reason (the stream's own route then says why).
 */
export async function refusedStreamCursor(
  app: { fetch(request: Request): Response | Promise<Response> },
  request: Request,
): Promise<Response | null> {
  const url = new URL(request.url);
  const lastEventId = request.headers.get("last-event-id");
  const after = lastEventId === null || lastEventId === "" ? url.searchParams.get("after") : lastEventId;
  if (after === null || after === "") return null;
  try {
    settlementNumber(after);
  } catch (error) {
    if (isFinalityError(error, "invalid-request")) return null;
    throw error;
  }
  const probe = new URL("/v1/settlements", url);
  probe.searchParams.set("after", after);
  probe.searchParams.set("limit", "1");
  const headers = new Headers();
  const authorization = request.headers.get("authorization");
  if (authorization !== null) headers.set("authorization", authorization);
  const answer = await app.fetch(new Request(probe, { headers }));
  await answer.body?.cancel();
  // Only `after` and `limit` were sent: a 400 is about the cursor.
  if (answer.status !== 400) return null;
  const field = lastEventId === null || lastEventId === "" ? "after" : "Last-Event-ID";
  return problemResponse(
    toProblem(
      new FinalityError("invalid-request", `${field}: not a settlement cursor this server gave`, {
        details: { field },
      }),
    ).problem,
  );
}
