import { createIntervalLoop, type IntervalLoop } from "../core/interval-loop.js";

/** A background loop `finality serve` runs, named for its logs; the same shape as host/node's BackgroundLoop. */
export interface PeriodicLoop extends IntervalLoop {
  readonly name: string;
}

/** `createIntervalLoop` with a name: passes never overlap; a pass may ask for a longer wait (Retry-After). */
export function createPeriodicLoop(
  name: string,
  intervalMs: number,
  pass: (isRunning: () => boolean) => Promise<number | undefined>,
  onError?: (error: Error) => void,
): PeriodicLoop {
  return { name, ...createIntervalLoop(pass, intervalMs, onError) };
}
