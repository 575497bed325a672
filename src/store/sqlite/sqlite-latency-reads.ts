import type { LatencyReads, LatencySamples } from "../latency-reads.js";
import type { SqliteDb } from "./sqlite-driver.js";

/** The latency reads of the SQLite Store, on the reader connection; each reads one index. */
export function createSqliteLatencyReads(reader: SqliteDb, assertOpen: () => void): LatencyReads {
  const detection = reader.prepare(
    `SELECT provider, coalesce(settled_by, 'unknown') AS source, settled_at - max_update_time AS ms
     FROM jobs WHERE settled_at >= @from AND settled_at < @to AND max_update_time IS NOT NULL
     ORDER BY settled_at DESC LIMIT @cap`, // jobs_settled_by_source
  );
  const toEffect = reader.prepare(
    `SELECT o.provider, o.name AS effect, coalesce(j.settled_by, 'unknown') AS source, o.delivered_at - j.max_update_time AS ms
     FROM outbox o JOIN jobs j ON j.provider = o.provider AND j.id = o.job_id
     WHERE o.status = 'delivered' AND o.delivered_at >= @from AND o.delivered_at < @to
       AND j.max_update_time IS NOT NULL
     ORDER BY o.delivered_at DESC LIMIT @cap`, // outbox_delivered, then the jobs' unique key
  );
  // Walks jobs_open_by_age from the oldest: costs the open jobs older than the provider's oldest.
  const oldestOpen = reader.prepare(
    "SELECT submitted_at AS at FROM jobs WHERE settled_at IS NULL AND provider = ? ORDER BY submitted_at LIMIT 1",
  );
  return {
    async latencySamples(window) {
      assertOpen();
      const params = { from: Math.trunc(window.from), to: Math.trunc(window.to), cap: window.cap };
      return {
        detection: detection.all(params) as { provider: string; source: string; ms: number }[],
        completionToEffect: toEffect.all(params) as LatencySamples["completionToEffect"],
      };
    },
    async oldestOpenByProvider(providers) {
      assertOpen();
      const out: Record<string, number> = {};
      for (const provider of providers) {
        const row = oldestOpen.get(provider) as { at: number } | undefined;
        if (row !== undefined) out[provider] = row.at;
      }
      return out;
    },
  };
}
