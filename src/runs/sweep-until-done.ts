import type { RunService } from "./run-service.js";
import type { SweepCounts } from "./sweep-leases.js";

/**
 * `finality sweep --once`: expires every lease due now, batch after batch until a batch comes
 * back short, and says what it did in one line. Safe beside a running `finality serve` (or
 * another sweep): each expiry is one transaction that decides again on what it reads.
 */
export async function sweepUntilDone(runs: RunService, batchSize = 500): Promise<string> {
  const total: Partial<SweepCounts> = {};
  for (;;) {
    const counts = await runs.sweepOnce(batchSize);
    let seen = 0;
    for (const [outcome, n] of Object.entries(counts) as [keyof SweepCounts, number][]) {
      total[outcome] = (total[outcome] ?? 0) + n;
      seen += n;
    }
    if (seen < batchSize) break;
  }
  const parts = Object.entries(total)
    .filter(([, n]) => n > 0)
    .map(([outcome, n]) => `${outcome} ${n}`);
  return parts.length === 0 ? "sweep: no lease was due" : `sweep: ${parts.join(", ")}`;
}
