import type { Attempt } from "../core/run-model.js";
import { Badge } from "./components.js";
import { formatJson, formatRelative } from "./format.js";

/** A run's attempts: who held it (worker, generation = fencing token), how it ended. */
export function AttemptTable(props: { attempts: readonly Attempt[]; now: number }) {
  if (props.attempts.length === 0) return <p class="muted">Not claimed by any worker yet.</p>;
  return (
    <table>
      <thead>
        <tr>
          <th class="num">generation</th>
          <th>worker</th>
          <th>status</th>
          <th>claimed</th>
          <th>last heartbeat</th>
          <th>lease</th>
          <th>ended</th>
          <th>error</th>
        </tr>
      </thead>
      <tbody>
        {props.attempts.map((attempt) => (
          <tr data-attempt={attempt.id} data-status={attempt.status}>
            <td class="num">{attempt.generation}</td>
            <td class="mono">{attempt.workerId}</td>
            <td>
              <Badge kind={attempt.status}>{attempt.status}</Badge>
            </td>
            <td>{formatRelative(attempt.claimedAt, props.now)}</td>
            <td>{formatRelative(attempt.heartbeatAt, props.now)}</td>
            <td>
              {attempt.leaseExpiresAt === null
                ? "—"
                : `expires ${formatRelative(attempt.leaseExpiresAt, props.now)}`}
            </td>
            <td>{formatRelative(attempt.endedAt, props.now)}</td>
            <td class="small mono">{attempt.error === null ? "—" : formatJson(attempt.error, 300)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
