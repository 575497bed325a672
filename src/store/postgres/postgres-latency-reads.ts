import type { LatencyReads, LatencySamples } from "../latency-reads.js";
import type { Read } from "./postgres-run-reads.js";

const epochMs = (column: string) => `extract(epoch FROM ${column})::float8 * 1000`;

const DETECTION = `
  SELECT provider, coalesce(settled_by, 'unknown') AS source, ${epochMs("settled_at")} - max_update_time AS ms
  FROM jobs
  WHERE settled_at >= to_timestamp($1::float8 / 1000) AND settled_at < to_timestamp($2::float8 / 1000)
    AND max_update_time IS NOT NULL
  ORDER BY settled_at DESC LIMIT $3`; // jobs_settled_by_source

const TO_EFFECT = `
  SELECT o.provider, o.name AS effect, coalesce(j.settled_by, 'unknown') AS source, ${epochMs("o.delivered_at")} - j.max_update_time AS ms
  FROM outbox o JOIN jobs j ON j.provider = o.provider AND j.id = o.job_id
  WHERE o.status = 'delivered'
    AND o.delivered_at >= to_timestamp($1::float8 / 1000) AND o.delivered_at < to_timestamp($2::float8 / 1000)
    AND j.max_update_time IS NOT NULL
  ORDER BY o.delivered_at DESC LIMIT $3`; // outbox_delivered, then the jobs' unique key

/** One row per provider, each from jobs_open_by_age. */
const OLDEST_OPEN = `
  SELECT p.provider, ${epochMs("o.at")} AS at FROM unnest($1::text[]) AS p(provider)
  CROSS JOIN LATERAL (SELECT submitted_at AS at FROM jobs
                      WHERE settled_at IS NULL AND provider = p.provider ORDER BY submitted_at LIMIT 1) AS o`;

export function createPostgresLatencyReads(read: Read): LatencyReads {
  return {
    async latencySamples(window) {
      const values = [window.from, window.to, window.cap];
      const [detection, completionToEffect] = await Promise.all([
        read<{ provider: string; source: string; ms: number }>("latencySamples", DETECTION, values),
        read<LatencySamples["completionToEffect"][number]>("latencySamples", TO_EFFECT, values),
      ]);
      return { detection, completionToEffect };
    },
    async oldestOpenByProvider(providers) {
      const rows = await read<{ provider: string; at: number }>("oldestOpenByProvider", OLDEST_OPEN, [
        providers,
      ]);
      return Object.fromEntries(rows.map((row) => [row.provider, row.at]));
    },
  };
}
