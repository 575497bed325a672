/**
 * Paging as the providers' list endpoints do it, shared by the fakes: objects newest first (ties:
 * the one stored last first, as an id sequence would), a page of `limit` after (or before) an id.
 */
export function newestFirst<T>(objects: Iterable<T>, createdAt: (object: T) => number): T[] {
  return [...objects]
    .map((object, index) => ({ object, index, at: createdAt(object) }))
    .sort((a, b) => b.at - a.at || b.index - a.index)
    .map((entry) => entry.object);
}

/** The page after `afterId` (or just before `beforeId`); undefined when that id is not in the list. */
export function pageOf<T>(
  list: T[],
  idOf: (object: T) => string,
  limit: number,
  cursor: { afterId?: string | null; beforeId?: string | null } = {},
): { page: T[]; hasMore: boolean } | undefined {
  if (cursor.beforeId) {
    const end = list.findIndex((object) => idOf(object) === cursor.beforeId);
    if (end < 0) return undefined;
    const start = Math.max(0, end - limit);
    return { page: list.slice(start, end), hasMore: start > 0 };
  }
  const start = cursor.afterId ? list.findIndex((object) => idOf(object) === cursor.afterId) + 1 : 0;
  if (start === 0 && cursor.afterId) return undefined;
  return { page: list.slice(start, start + limit), hasMore: start + limit < list.length };
}

/** `value` as an integer in [min, max], the default when absent; undefined when out of range. */
export function limitParam(
  value: string | null,
  fallback: number,
  min: number,
  max: number,
): number | undefined {
  if (value === null) return fallback;
  const limit = Number(value);
  return Number.isInteger(limit) && limit >= min && limit <= max ? limit : undefined;
}
