import { type Attempt, RUN_STATUSES, type Run, type RunStatus } from "../core/run-model.js";
import type { Store } from "../store/store.js";
import { Badge } from "./components.js";
import { type Column, DataTable } from "./data-table.js";
import { choicesOf, LabelledSelect } from "./filter-select.js";
import { formatRelative, jobHref, queryString } from "./format.js";

const LIVE_LEASES = 200;
/** Later than any lease: every live lease is "due" by then. */
const FAR_FUTURE_MS = 10 * 365 * 24 * 3600 * 1000;

interface RunsView {
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
        <LabelledSelect
          label="status"
          name="status"
          choices={[["", "any"], ...choicesOf(RUN_STATUSES)]}
          selected={props.status ?? ""}
        />
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

function RunLink(props: { id: string }) {
  return (
    <a class="mono" href={jobHref("runs", props.id)}>
      {props.id}
    </a>
  );
}

export function RunsPage(props: { view: RunsView; now: number }) {
  const { view, now } = props;
  const leaseColumns: Column<Attempt>[] = [
    { head: "worker", class: "mono", cell: (attempt) => attempt.workerId },
    { head: "run", cell: (attempt) => <RunLink id={attempt.runId} /> },
    { head: "generation", num: true, cell: (attempt) => attempt.generation },
    { head: "attempt", cell: (attempt) => <Badge kind={attempt.status}>{attempt.status}</Badge> },
    { head: "last heartbeat", cell: (attempt) => formatRelative(attempt.heartbeatAt, now) },
    { head: "lease expires", cell: (attempt) => formatRelative(attempt.leaseExpiresAt, now) },
  ];
  const runColumns: Column<RunsView["runs"][number]>[] = [
    { head: "run", cell: ({ run }) => <RunLink id={run.id} /> },
    { head: "kind", cell: ({ run }) => run.kind },
    {
      head: "status",
      cell: ({ run }) => (
        <>
          <Badge kind={run.status}>{run.status}</Badge>
          {run.cancelRequested && <Badge kind="flag">cancel requested</Badge>}
        </>
      ),
    },
    { head: "attempts", num: true, cell: ({ run }) => `${run.attemptCount}/${run.maxAttempts}` },
    {
      head: "attempts (generation · worker · status)",
      class: "small",
      cell: ({ attempts }) =>
        attempts.length === 0
          ? "—"
          : attempts.map((a) => (
              <div data-attempt={a.id}>
                #{a.generation} · <span class="mono">{a.workerId}</span> ·{" "}
                <Badge kind={a.status}>{a.status}</Badge>
              </div>
            )),
    },
    { head: "created", cell: ({ run }) => formatRelative(run.createdAt, now) },
    { head: "settled", cell: ({ run }) => formatRelative(run.settledAt, now) },
  ];
  return (
    <>
      <h2>Workers holding a lease</h2>
      <DataTable
        rows={view.workers.flatMap(({ attempts }) => attempts)}
        columns={leaseColumns}
        empty="No worker holds a lease right now."
        attrs={{ id: "workers" }}
        rowAttrs={(attempt) => ({ "data-worker": attempt.workerId })}
      />
      <h2>Runs</h2>
      <DataTable
        rows={view.runs}
        columns={runColumns}
        empty="No runs match."
        attrs={{ id: "runs" }}
        rowAttrs={({ run }) => ({ "data-run": run.id, "data-status": run.status })}
      />
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
