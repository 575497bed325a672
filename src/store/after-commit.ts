import type { AdapterTx, StoreTx } from "./store.js";

/**
 * `Store.transaction` on an adapter's own transaction runner: each run of `work` gets a tx whose
 * `afterCommit` collects callbacks, and the callbacks of the run that committed are called once
 * `run` has resolved. Every adapter resolves only after its COMMIT (a group's shared one
 * included) and rejects when the work threw or the commit failed, so resolving is the commit.
 */
export async function withAfterCommit<T>(
  run: (work: (tx: AdapterTx) => Promise<T>) => Promise<T>,
  work: (tx: StoreTx) => Promise<T>,
): Promise<T> {
  let committed: (() => void)[] = [];
  const value = await run((tx) => {
    // Fresh for each run: a run rolled back (a version conflict, a batch-mate's failure) and
    // re-run must not leave its callbacks behind.
    const callbacks: (() => void)[] = [];
    committed = callbacks;
    const withCallbacks: StoreTx = Object.create(tx);
    withCallbacks.afterCommit = (fn) => {
      callbacks.push(fn);
    };
    return work(withCallbacks);
  });
  runAll(committed);
  return value;
}

/** Calls each in order; one that throws does not stop the others, and the first error is rethrown. */
function runAll(callbacks: readonly (() => void)[]): void {
  let failure: { error: unknown } | null = null;
  for (const fn of callbacks) {
    try {
      fn();
    } catch (error) {
      failure ??= { error };
    }
  }
  if (failure !== null) throw failure.error;
}
