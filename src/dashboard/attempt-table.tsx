import type { Attempt } from "../core/run-model.js";
import { Badge } from "./components.js";
import { type Column, DataTable } from "./data-table.js";
import { formatJson, formatRelative } from "./format.js";

/** A run's attempts: who held it (worker, generation = fencing token), how it ended. */
export function AttemptTable(props: { attempts: readonly Attempt[]; now: number }) {
  const { now } = props;
  const columns: Column<Attempt>[] = [
    { head: "generation", num: true, cell: (attempt) => attempt.generation },
    { head: "worker", class: "mono", cell: (attempt) => attempt.workerId },
    { head: "status", cell: (attempt) => <Badge kind={attempt.status}>{attempt.status}</Badge> },
    { head: "claimed", cell: (attempt) => formatRelative(attempt.claimedAt, now) },
    { head: "last heartbeat", cell: (attempt) => formatRelative(attempt.heartbeatAt, now) },
    {
      head: "lease",
      cell: (attempt) =>
        attempt.leaseExpiresAt === null ? "—" : `expires ${formatRelative(attempt.leaseExpiresAt, now)}`,
    },
    { head: "ended", cell: (attempt) => formatRelative(attempt.endedAt, now) },
    {
      head: "error",
      class: "small mono",
      cell: (attempt) => (attempt.error === null ? "—" : formatJson(attempt.error, 300)),
    },
  ];
  return (
    <DataTable
      rows={props.attempts}
      columns={columns}
      empty="Not claimed by any worker yet."
      rowAttrs={(attempt) => ({ "data-attempt": attempt.id, "data-status": attempt.status })}
    />
  );
}
