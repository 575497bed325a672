import type { Job, JobKey } from "../core/model.js";
import type { Store } from "../store/store.js";

/** What a wait reads: one job, and the feed's commit signal (local, or NOTIFY across replicas). */
type JobWaitSource = Pick<Store, "getJob" | "settlementCommitted">;

/** How one wait ended: the job as it then was (null: no such job), and whether it had settled. */
interface JobWaitOutcome {
  job: Job | null;
  settled: boolean;
}

interface Watch {
  name: string;
  /** Resolved with the settled job once it is seen terminal; every waiter of the key shares it. */
  settled: Promise<Job>;
  waiters: number;
  stop: AbortController;
}

/**
 * Waiters for single jobs to settle. Each waited-for job has one watch, whatever the number of
 * waiters on it: the watch reads the job once per settlement commit (woken by the commit, never by
 * a timer of its own), and ends when the job is terminal or its last waiter left. So a hundred
 * callers awaiting one job cost one read per commit, not a hundred.
 */
export function createJobWaiters(source: JobWaitSource) {
  const watches = new Map<string, Watch>();

  function watch(key: JobKey): Watch {
    const name = JSON.stringify([key.provider, key.id]);
    const existing = watches.get(name);
    if (existing !== undefined) return existing;
    const stop = new AbortController();
    const settled = (async () => {
      while (!stop.signal.aborted) {
        // Asked for before the read, so a commit between the read and the wait still wakes it.
        const woken = source.settlementCommitted(stop.signal);
        const job = await source.getJob(key);
        if (job?.settledAt != null) return job;
        await woken;
      }
      throw stop.signal.reason;
    })();
    // A watch that ends by its waiters leaving rejects with nobody listening: not an error.
    settled.catch(() => {});
    const created: Watch = { name, settled, waiters: 0, stop };
    watches.set(name, created);
    const forget = () => {
      if (watches.get(name) === created) watches.delete(name);
    };
    void settled.then(forget, forget);
    return created;
  }

  return {
    /**
     * Resolves when the job is settled (at once if it already is), or at `timeoutMs` or when
     * `signal` aborts with the job as it then is. Never rejects for a timeout: the outcome says
     * whether it settled. A store error rejects.
     */
    async waitForSettled(
      key: JobKey,
      options: { timeoutMs: number; signal?: AbortSignal | undefined },
    ): Promise<JobWaitOutcome> {
      const current = await source.getJob(key);
      if (
        current === null ||
        current.settledAt !== null ||
        options.timeoutMs <= 0 ||
        options.signal?.aborted
      ) {
        return { job: current, settled: current?.settledAt != null };
      }
      const w = watch(key);
      w.waiters += 1;
      let timer: ReturnType<typeof setTimeout> | undefined;
      let onAbort: (() => void) | undefined;
      const gaveUp = new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), options.timeoutMs);
        onAbort = () => resolve(null);
        options.signal?.addEventListener("abort", onAbort, { once: true });
      });
      try {
        const job = await Promise.race([w.settled, gaveUp]);
        if (job !== null) return { job, settled: true };
        const now = await source.getJob(key);
        return { job: now, settled: now?.settledAt != null };
      } finally {
        clearTimeout(timer);
        if (onAbort) options.signal?.removeEventListener("abort", onAbort);
        w.waiters -= 1;
        if (w.waiters === 0) {
          // Gone from the map at once, so a waiter arriving now starts a fresh watch.
          if (watches.get(w.name) === w) watches.delete(w.name);
          w.stop.abort();
        }
      }
    },
    /** Jobs watched right now (for tests and metrics): one per waited-for job, not per waiter. */
    watched(): number {
      return watches.size;
    },
  };
}

export type JobWaiters = ReturnType<typeof createJobWaiters>;
