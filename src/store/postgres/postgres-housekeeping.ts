import type { HousekeepingStats, HousekeepingStore, PruneTarget } from "../housekeeping-store.js";
import { pruneSettledJobs, type Query } from "./postgres-lifecycle.js";
import { fromTime, toTime } from "./postgres-rows.js";
import { numberSettlements } from "./postgres-settlements.js";

type Read = <T>(what: string, text: string, values?: readonly unknown[]) => Promise<T[] & { count: number }>;
/** Runs `work` in one READ COMMITTED transaction (retried like the store's own). */
type Transact = <T>(what: string, work: (q: Query) => Promise<T>) => Promise<T>;

/** The rows each target prunes ($1: before, oldest first); see housekeeping-store.ts. */
const DOOMED: Record<PruneTarget, { from: string; key: string; oldest: string }> = {
  deliveries: {
    from: "SELECT provider, delivery_id FROM deliveries WHERE received_at < $1 ORDER BY received_at",
    key: "provider, delivery_id",
    oldest: "SELECT min(received_at) AS at FROM deliveries",
  },
  events: {
    from: "SELECT event_no FROM events WHERE at < $1 ORDER BY at",
    key: "event_no",
    oldest: "SELECT min(at) AS at FROM events",
  },
  settledJobs: {
    from: `SELECT job_no, provider, id, state, settled_at FROM jobs j WHERE settled_at IS NOT NULL AND settled_at < $1
      AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.provider = j.provider AND o.job_id = j.id AND o.status <> 'delivered')
      ORDER BY settled_at`,
    key: "job_no",
    oldest: "SELECT min(settled_at) AS at FROM jobs WHERE settled_at IS NOT NULL",
  },
  deliveredEffects: {
    from: "SELECT effect_no FROM outbox WHERE status = 'delivered' AND delivered_at < $1 ORDER BY delivered_at",
    key: "effect_no",
    oldest: "SELECT min(delivered_at) AS at FROM outbox WHERE status = 'delivered'",
  },
  settledRuns: {
    from: "SELECT id FROM runs WHERE settled_at IS NOT NULL AND settled_at < $1 ORDER BY settled_at",
    key: "id",
    oldest: "SELECT min(settled_at) AS at FROM runs WHERE settled_at IS NOT NULL",
  },
  tombstones: {
    from: "SELECT provider, id FROM tombstones WHERE settled_at < $1 ORDER BY settled_at",
    key: "provider, id",
    oldest: "SELECT min(settled_at) AS at FROM tombstones",
  },
  parked: {
    from: "SELECT parked_no FROM parked WHERE parked_at < $1 ORDER BY parked_at",
    key: "parked_no",
    oldest: "SELECT min(parked_at) AS at FROM parked",
  },
  settlements: {
    // Numbered rows only: prune() numbers the committed ones first (migration 0016), so what is
    // left unnumbered belongs to a transaction that has not committed.
    from: "SELECT settlement_no FROM settlements WHERE settled_at < $1 AND settlement_no IS NOT NULL ORDER BY settled_at",
    key: "settlement_no",
    oldest: "SELECT min(settled_at) AS at FROM settlements",
  },
};

const TABLE: Record<PruneTarget, string> = {
  deliveries: "deliveries",
  events: "events",
  settledJobs: "jobs",
  deliveredEffects: "outbox",
  settledRuns: "runs",
  tombstones: "tombstones",
  parked: "parked",
  settlements: "settlements",
};

function deleteStatement(target: PruneTarget): string {
  const { from, key } = DOOMED[target];
  // A job locked by another transaction (a replay re-arming its effects, an ingest) is skipped
  // this pass rather than deleted when that transaction commits.
  const lock = target === "settledJobs" ? " FOR UPDATE OF j SKIP LOCKED" : "";
  const doomed = `WITH doomed AS (${from} LIMIT $2${lock})`;
  if (target === "settledRuns") {
    // Attempts reference their run; the sibling deletes run in the same statement.
    return `${doomed}, e AS (DELETE FROM run_events WHERE run_id IN (SELECT id FROM doomed)),
      a AS (DELETE FROM attempts WHERE run_id IN (SELECT id FROM doomed))
      DELETE FROM runs WHERE id IN (SELECT id FROM doomed)`;
  }
  return `${doomed} DELETE FROM ${TABLE[target]} WHERE (${key}) IN (SELECT ${key} FROM doomed)`;
}

/** Retention on PostgreSQL; space is given back by autovacuum (settings in migration 0004). */
export function createPostgresHousekeeping(read: Read, transact: Transact): HousekeepingStore {
  return {
    async prune(target, before, limit) {
      if (target === "settledJobs") {
        // Several statements (tombstones first): one transaction.
        return transact("prune settledJobs", (q) =>
          pruneSettledJobs(q, DOOMED.settledJobs.from, before, limit),
        );
      }
      // Without readers, settlements would wait unnumbered, and unpruned, for ever.
      if (target === "settlements") await numberSettlements(read);
      const result = await read(`prune ${target}`, deleteStatement(target), [toTime(before), limit]);
      return result.count;
    },

    async countPrunable(target, before) {
      if (target === "settlements") await numberSettlements(read);
      const [row] = await read<{ n: string }>(
        `count ${target}`,
        `SELECT count(*) AS n FROM (${DOOMED[target].from}) t`,
        [toTime(before)],
      );
      return Number(row?.n ?? 0);
    },

    async housekeepingStats(): Promise<HousekeepingStats> {
      const [size] = await read<{ bytes: string }>(
        "database size",
        `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) AS bytes FROM pg_class c
         JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r'`,
      );
      const oldest = {} as HousekeepingStats["oldest"];
      for (const [target, spec] of Object.entries(DOOMED) as [PruneTarget, (typeof DOOMED)[PruneTarget]][]) {
        const [row] = await read<{ at: Date | null }>(`oldest ${target}`, spec.oldest);
        oldest[target] = fromTime(row?.at ?? null);
      }
      return { sizeBytes: Number(size?.bytes ?? 0), freeBytes: 0, oldest };
    },

    async reclaim() {
      return 0;
    },
  };
}
