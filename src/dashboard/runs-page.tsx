import { type Attempt, RUN_STATUSES, type Run, type RunStatus } from "../core/run-model.js";
import type { Store } from "../store/store.js";
import { Badge } from "./components.js";
import { formatRelative, jobHref, queryString } from "./format.js";

const LIVE_LEASES = 200;
/** Later than any lease: every live lease is "due" by then. */
const FAR_FUTURE_MS = 10 * 365 * 24 * 3600 * 1000;

export interface RunsView {
  status: RunStatus | null;
  kind: string | undefined;
  cursor: string | undefined;
  runs: { run: Run; attempts: Attempt[] }[];
  nextCursor: string | null;
  /** Workers holding a lease now, with the attempts they hold. */
  workers: { workerId: string; attempts: Attempt[] }[];
}

export function parseRunStatus(value: string | undefined): RunStatus | null {
  return (RUN_STATUSES as readonly (string | undefined)[]).includes(value) ? (value as RunStatus) : null;
}

/** One page of runs with their attempts, and the live leases (at most 200, soonest to expire first). */
export async function loadRuns(
  store: Store,
  query: { status: RunStatus | null; kind: string | undefined; cursor: string | undefined },
  now: number,
): Promise<RunsView> {
  const [page, leases] = await Promise.all([
    store.listRuns({ status: query.status ?? undefined, kind: query.kind, cursor: query.cursor, limit: 25 }),
    store.dueLeases(now + FAR_FUTURE_MS, LIVE_LEASES),
  ]);
  const runs = await Promise.all(
    page.items.map(async (run) => ({ run, attempts: await store.runAttempts(run.id) })),
  );
  const held = await Promise.all(
    leases.map(async (lease) => (await store.runAttempts(lease.runId)).find((a) => a.id === lease.attemptId)),
  );
  const byWorker = new Map<string, Attempt[]>();
  for (const attempt of held) {
    if (attempt === undefined) continue;
    byWorker.set(attempt.workerId, [...(byWorker.get(attempt.workerId) ?? []), attempt]);
  }
  const workers = [...byWorker].map(([workerId, attempts]) => ({ workerId, attempts }));
  workers.sort((a, b) => (a.workerId < b.workerId ? -1 : 1));
  return { ...query, runs, nextCursor: page.nextCursor, workers };
}

export function RunsFilters(props: { status: RunStatus | null; kind: string | undefined }) {
  return (
    <>
      <h1>Runs on your workers</h1>
      <form class="filters" method="get" action="/runs">
        <label>
          status
          <select name="status">
            <option value="" selected={props.status === null}>
              any
            </option>
            {RUN_STATUSES.map((status) => (
              <option value={status} selected={props.status === status}>
                {status}
              </option>
            ))}
          </select>
        </label>
        <label>
          kind
          <input type="text" name="kind" value={props.kind ?? ""} size={14} />
        </label>
        <button type="submit">Apply</button>
        <a href="/runs">clear</a>
      </form>
    </>
  );
}

export function RunsPage(props: { view: RunsView; now: number }) {
  const { view, now } = props;
  return (
    <>
      <h2>Workers holding a lease</h2>
      {view.workers.length === 0 ? (
        <p class="muted">No worker holds a lease right now.</p>
      ) : (
        <table id="workers">
          <thead>
            <tr>
              <th>worker</th>
              <th>run</th>
              <th class="num">generation</th>
              <th>attempt</th>
              <th>last heartbeat</th>
              <th>lease expires</th>
            </tr>
          </thead>
          <tbody>
            {view.workers.flatMap(({ workerId, attempts }) =>
              attempts.map((attempt) => (
                <tr data-worker={workerId}>
                  <td class="mono">{workerId}</td>
                  <td>
                    <a class="mono" href={jobHref("runs", attempt.runId)}>
                      {attempt.runId}
                    </a>
                  </td>
                  <td class="num">{attempt.generation}</td>
                  <td>
                    <Badge kind={attempt.status}>{attempt.status}</Badge>
                  </td>
                  <td>{formatRelative(attempt.heartbeatAt, now)}</td>
                  <td>{formatRelative(attempt.leaseExpiresAt, now)}</td>
                </tr>
              )),
            )}
          </tbody>
        </table>
      )}
      <h2>Runs</h2>
      {view.runs.length === 0 ? (
        <p class="muted">No runs match.</p>
      ) : (
        <table id="runs">
          <thead>
            <tr>
              <th>run</th>
              <th>kind</th>
              <th>status</th>
              <th class="num">attempts</th>
              <th>attempts (generation · worker · status)</th>
              <th>created</th>
              <th>settled</th>
            </tr>
          </thead>
          <tbody>
            {view.runs.map(({ run, attempts }) => (
              <tr data-run={run.id} data-status={run.status}>
                <td>
                  <a class="mono" href={jobHref("runs", run.id)}>
                    {run.id}
                  </a>
                </td>
                <td>{run.kind}</td>
                <td>
                  <Badge kind={run.status}>{run.status}</Badge>
                  {run.cancelRequested && <Badge kind="flag">cancel requested</Badge>}
                </td>
                <td class="num">
                  {run.attemptCount}/{run.maxAttempts}
                </td>
                <td class="small">
                  {attempts.length === 0
                    ? "—"
                    : attempts.map((a) => (
                        <div data-attempt={a.id}>
                          #{a.generation} · <span class="mono">{a.workerId}</span> ·{" "}
                          <Badge kind={a.status}>{a.status}</Badge>
                        </div>
                      ))}
                </td>
                <td>{formatRelative(run.createdAt, now)}</td>
                <td>{formatRelative(run.settledAt, now)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {view.nextCursor !== null && (
        <div class="pager">
          <a
            href={`/runs${queryString({ status: view.status, kind: view.kind, cursor: view.nextCursor })}`}
            id="next-page"
          >
            next page →
          </a>
        </div>
      )}
    </>
  );
}
