import { toError } from "./errors.js";

/** A background pass run every `intervalMs`, one at a time: retention, the lease sweeper, … */
export interface IntervalLoop {
  start(): void;
  /** Resolves once the pass in progress (if any) has finished; nothing runs after it. */
  stop(): Promise<void>;
}

/**
 * Runs `pass` `intervalMs` after the previous one ended (never two at once, so a slow pass delays
 * the next rather than piling up), reports a failed pass to `onError` and goes on. A pass may
 * answer a number, a longer delay in ms before the next (a provider's Retry-After), and may ask `isRunning()`
 * between batches to end early once the loop is stopping. `immediate`: the first pass runs at
 * `start`, not one interval later. The timer is unref'd: a loop alone does not keep the process
 * alive.
 */
export function createIntervalLoop(
  pass: (isRunning: () => boolean) => Promise<unknown>,
  intervalMs: number,
  onError?: (error: Error) => void,
  options: { immediate?: boolean } = {},
): IntervalLoop {
  let timer: ReturnType<typeof setTimeout> | null = null;
  let running = false;
  let current: Promise<void> | null = null;

  function runPass(): void {
    let next = intervalMs;
    current = pass(() => running)
      .then((asked) => {
        if (typeof asked === "number") next = Math.max(intervalMs, asked);
      })
      .catch((error: unknown) => onError?.(toError(error)))
      .finally(() => {
        current = null;
        schedule(next);
      });
  }

  function schedule(delayMs = intervalMs): void {
    if (!running) return;
    timer = setTimeout(runPass, delayMs);
    timer.unref?.();
  }

  return {
    start() {
      if (running) return;
      running = true;
      if (options.immediate) runPass();
      else schedule();
    },
    async stop() {
      running = false;
      if (timer) clearTimeout(timer);
      await current;
    },
  };
}
