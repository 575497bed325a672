import { createIntervalLoop } from "../core/interval-loop.js";
import type { RunService } from "./run-service.js";
import type { SweepCounts } from "./sweep-leases.js";

export interface LeaseSweeperOptions {
  /** Time between sweeps (default 1 s). A lease is expired at most this long after it ran out. */
  intervalMs?: number;
  /** Leases expired per transaction batch (default 500); a full batch is followed at once by another. */
  batchSize?: number;
  /** After each sweep that changed something, and on errors (logging, metrics). */
  onSweep?: (counts: SweepCounts) => void;
  onError?: (error: Error) => void;
}

/** The sweeper loop `finality serve` runs; same shape as the CLI's BackgroundLoop. */
export interface LeaseSweeper {
  readonly name: "lease-sweeper";
  start(): void;
  /** Resolves once the sweep in progress (if any) has finished; nothing runs after it. */
  stop(): Promise<void>;
}

export function createLeaseSweeper(runs: RunService, options: LeaseSweeperOptions = {}): LeaseSweeper {
  const intervalMs = options.intervalMs ?? 1000;
  const batchSize = options.batchSize ?? 500;
  // Read by a sweep between batches: a stopped loop ends its sweep after the current batch.
  let running = false;

  async function sweep(): Promise<void> {
    for (;;) {
      const counts = await runs.sweepOnce(batchSize);
      const expired = Object.entries(counts).reduce(
        (sum, [outcome, n]) => (outcome === "not_due" || outcome === "already_expired" ? sum : sum + n),
        0,
      );
      if (expired > 0) options.onSweep?.(counts);
      const seen = Object.values(counts).reduce((a, b) => a + b, 0);
      if (seen < batchSize || !running) return;
    }
  }

  const loop = createIntervalLoop(sweep, intervalMs, options.onError);
  return {
    name: "lease-sweeper",
    start() {
      running = true;
      loop.start();
    },
    stop() {
      running = false;
      return loop.stop();
    },
  };
}
