import type { Intent } from "../core/intent-model.js";
import type { Finality } from "./finality.js";
import { createPeriodicLoop, type PeriodicLoop } from "./periodic-loop.js";

interface OrphanScanOptions {
  /** Time between scans (default 1 s): an intent is flagged at most this long after its deadline. */
  intervalMs?: number;
  /** Intents flagged per transaction (default 100); a full batch is followed at once by another. */
  batchSize?: number;
  onFlagged?: (intents: Intent[]) => void;
  onError?: (error: Error) => void;
}

/**
 * The loop `finality serve` runs to flag open intents past their deadline as orphaned (each once,
 * see flagOrphanedInTx). A scan costs the overdue intents only: the index holds open ones.
 */
export function createOrphanScanLoop(finality: Finality, options: OrphanScanOptions = {}): PeriodicLoop {
  const batchSize = options.batchSize ?? 100;
  return createPeriodicLoop(
    "orphan-scan",
    options.intervalMs ?? 1000,
    async (isRunning) => {
      for (;;) {
        const flagged = await finality.flagOrphanedIntents(batchSize);
        if (flagged.length > 0) options.onFlagged?.(flagged);
        if (flagged.length < batchSize || !isRunning()) return undefined;
      }
    },
    options.onError,
  );
}
