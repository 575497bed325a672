/**
 * Wakes long-polling claims in this process when a run becomes claimable. Runs enqueued by
 * another process (another replica, `finality` CLI) are found by the waiters' periodic re-check
 * instead, so a missed wake-up costs latency, never a run.
 */
export interface RunNotifier {
  notify(): void;
  /** Counts `notify()` calls: read it before looking for work, pass it to `wait`. */
  readonly version: number;
  /**
   * Resolves after `ms`, at the next `notify()`, when `signal` aborts, or at `close()`,
   * whichever comes first; at once if `notify()` was called since `seenVersion`, so that a
   * wake-up between looking for work and starting to wait is never lost. Never rejects.
   */
  wait(ms: number, signal?: AbortSignal, seenVersion?: number): Promise<void>;
  /** Releases every waiter now and makes later waits return at once (shutdown). */
  close(): void;
  readonly closed: boolean;
}

export function createRunNotifier(): RunNotifier {
  let waiters = new Set<() => void>();
  let closed = false;
  let version = 0;

  function wakeAll(): void {
    version += 1;
    const woken = waiters;
    waiters = new Set();
    for (const wake of woken) wake();
  }

  return {
    notify: wakeAll,
    get version() {
      return version;
    },
    wait(ms, signal, seenVersion) {
      if (closed || signal?.aborted || (seenVersion !== undefined && seenVersion !== version))
        return Promise.resolve();
      return new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", done);
          waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, ms);
        signal?.addEventListener("abort", done, { once: true });
        waiters.add(done);
      });
    },
    close() {
      closed = true;
      wakeAll();
    },
    get closed() {
      return closed;
    },
  };
}
