import { type Intent, intentStatus } from "../core/intent-model.js";
import type { Store } from "../store/store.js";
import { formatJson, formatRelative, formatTime, jobHref } from "./format.js";

/** Orphaned intents first (they need attention), then the newest open and attached ones. */
export async function loadIntents(store: Store) {
  const [orphaned, recent] = await Promise.all([
    store.listIntents({ status: "orphaned", limit: 50 }),
    store.listIntents({ limit: 50 }),
  ]);
  return { orphaned, recent };
}

export function IntentsPage(props: { orphaned: readonly Intent[]; recent: readonly Intent[]; now: number }) {
  return (
    <>
      <h1>Intents</h1>
      <p class="muted">
        Submissions recorded before the provider was called. An intent with no remote id after its timeout is
        orphaned: the application may have crashed after the provider accepted the job. A discovery sweep that
        finds the job by its tag attaches it.
      </p>
      <h2 id="orphaned-intents">Orphaned ({props.orphaned.length})</h2>
      <IntentTable intents={props.orphaned} now={props.now} empty="No orphaned intent." />
      <h2>Recent</h2>
      <IntentTable intents={props.recent} now={props.now} empty="No intent recorded yet." />
    </>
  );
}

function IntentTable(props: { intents: readonly Intent[]; now: number; empty: string }) {
  if (props.intents.length === 0) return <p class="muted">{props.empty}</p>;
  return (
    <table>
      <thead>
        <tr>
          <th>recorded</th>
          <th>key</th>
          <th>provider</th>
          <th>kind</th>
          <th>status</th>
          <th>job</th>
          <th>metadata</th>
        </tr>
      </thead>
      <tbody>
        {props.intents.map((i) => (
          <tr data-intent={i.key}>
            <td title={formatTime(i.createdAt)}>{formatRelative(i.createdAt, props.now)}</td>
            <td class="mono">{i.key}</td>
            <td>{i.provider}</td>
            <td>{i.kind ?? "—"}</td>
            <td>{intentStatus(i)}</td>
            <td>
              {i.jobId === null ? (
                "—"
              ) : (
                <a href={jobHref(i.provider, i.jobId)} class="mono">
                  {i.jobId}
                </a>
              )}
            </td>
            <td class="mono">{i.metadata === null ? "—" : formatJson(i.metadata)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
