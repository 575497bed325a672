import { toError } from "../core/errors.js";
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
  let running = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let current: Promise<void> | null = null;

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

  function schedule(): void {
    if (!running) return;
    timer = setTimeout(() => {
      current = sweep()
        .catch((error: unknown) => options.onError?.(toError(error)))
        .finally(() => {
          current = null;
          schedule();
        });
    }, intervalMs);
    timer.unref?.();
  }

  return {
    name: "lease-sweeper",
    start() {
      if (running) return;
      running = true;
      schedule();
    },
    async stop() {
      running = false;
      if (timer) clearTimeout(timer);
      await current;
    },
  };
}
