import { encodeCursor } from "../store/json-column.js";
import type { SqlStorage } from "./cloudflare-types.js";

/** The row number of each item of a list page, per list the Worker merges across shards. */
const ROW_OF: Record<string, (sql: SqlStorage, item: Record<string, unknown>) => unknown> = {
  "/v1/jobs": (sql, item) =>
    sql
      .exec("SELECT job_no AS n FROM jobs WHERE provider = ? AND id = ?", item.provider, item.id)
      .toArray()[0]?.n,
  "/v1/effects": (sql, item) =>
    sql.exec("SELECT effect_no AS n FROM outbox WHERE id = ?", item.id).toArray()[0]?.n,
  // A parked observation carries its row number.
  "/v1/parked": (_sql, item) => item.parkedNo,
};

export function mergeableList(path: string): boolean {
  return Object.hasOwn(ROW_OF, path);
}

/**
 * Adds `itemCursors` to a list page: for each item, the cursor that continues right after it,
 * the same one the store would give as `nextCursor` for a page ending there. The Worker takes a
 * prefix of each shard's page and resumes each shard exactly after what it took. Read in the
 * same synchronous turn as nothing else runs, so the rows are the ones the page was read from
 * unless one was deleted in between (then the item's cursor is the previous item's: the page
 * resumes one earlier, never later, so nothing is skipped).
 */
export async function withItemCursors(sql: SqlStorage, path: string, response: Response): Promise<Response> {
  const rowOf = ROW_OF[path];
  if (rowOf === undefined || response.status !== 200) return response;
  const page = (await response.json()) as { items: Record<string, unknown>[]; nextCursor: string | null };
  return Response.json({ ...page, itemCursors: itemCursorsOf(sql, path, page.items) });
}

/** The cursor right after each of `items`, a page of the list at `path` (one of ROW_OF's). */
export function itemCursorsOf(sql: SqlStorage, path: string, items: readonly object[]): (string | null)[] {
  const rowOf = ROW_OF[path];
  if (rowOf === undefined) throw new Error(`no row numbers for ${path}`);
  let last: string | null = null;
  return items.map((item) => {
    const row = rowOf(sql, item as Record<string, unknown>);
    if (typeof row === "number") last = encodeCursor(row);
    return last;
  });
}
