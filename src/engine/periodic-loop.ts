import { toError } from "../core/errors.js";

/** A background loop `finality serve` runs; the same shape as host/node's BackgroundLoop. */
export interface PeriodicLoop {
  readonly name: string;
  start(): void;
  /** Resolves once the pass in progress (if any) has finished; nothing runs after it. */
  stop(): Promise<void>;
}

/**
 * Runs `pass` every `intervalMs` (the wait counted from the end of the last pass, so passes
 * never overlap). `pass` answers the delay before the next one when it wants another (a
 * provider's Retry-After); its errors go to `onError` and the loop goes on.
 */
export function createPeriodicLoop(
  name: string,
  intervalMs: number,
  pass: (isRunning: () => boolean) => Promise<number | undefined>,
  onError?: (error: Error) => void,
): PeriodicLoop {
  let running = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let current: Promise<void> | null = null;

  function schedule(delayMs: number): void {
    if (!running) return;
    timer = setTimeout(() => {
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
    }, delayMs);
    timer.unref?.();
  }

  return {
    name,
    start() {
      if (running) return;
      running = true;
      schedule(intervalMs);
    },
    async stop() {
      running = false;
      if (timer) clearTimeout(timer);
      await current;
    },
  };
}
