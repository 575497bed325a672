/**
 * Awaits calls that send their statements together, in the order given, and answers their
 * values as `Promise.all` does; when some fail, it throws the error of the first that failed in
 * that order, not the first to be seen.
 *
 * Why: on PostgreSQL, once a statement of a transaction fails, every statement sent after it
 * fails too (25P02, "current transaction is aborted"). Which rejection `Promise.all` sees first
 * depends on how many awaits lie on each call's path, so a work could throw a collateral 25P02
 * instead of its cause (a lost race answered FNL01, which has the work run again): the store,
 * not seeing FNL01, failed the caller instead of running the work again.
 */
export async function inSendingOrder<T extends readonly unknown[]>(
  calls: T,
): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  const settled = await Promise.allSettled(calls);
  for (const outcome of settled) if (outcome.status === "rejected") throw outcome.reason;
  return settled.map((outcome) => (outcome as PromiseFulfilledResult<unknown>).value) as {
    -readonly [K in keyof T]: Awaited<T[K]>;
  };
}
