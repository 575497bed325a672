import type { ParkedObservation, Tombstone } from "../store/lifecycle-store.js";
import type { Page, Store } from "../store/store.js";
import { SourceBadge, StateBadge } from "./components.js";
import { formatJson, formatRelative, formatTime, jobHref, queryString } from "./format.js";

/**
 * The early-completion inbox: observations for jobs nobody registered yet (providers with
 * `registered-only`). Each is applied, in arrival order, when its job is registered, or pruned
 * after `retention.parkedDays`.
 */
export async function loadParked(store: Store, query: { provider?: string; id?: string; cursor?: string }) {
  return store.listParked({ ...query, limit: 50 });
}

export function ParkedPage(props: {
  page: Page<ParkedObservation>;
  now: number;
  provider?: string | undefined;
}) {
  return (
    <>
      <h1>Parked observations</h1>
      <p class="muted">
        Completions that arrived before their job was registered. They are kept, answered 2xx, and applied in
        order the moment the job is registered.
      </p>
      <ParkedTable parked={props.page.items} now={props.now} empty="Nothing is parked." />
      {props.page.nextCursor !== null && (
        <div class="pager">
          <a
            href={`/parked${queryString({ provider: props.provider, cursor: props.page.nextCursor })}`}
            id="more-parked"
          >
            next page →
          </a>
        </div>
      )}
    </>
  );
}

export function ParkedTable(props: { parked: readonly ParkedObservation[]; now: number; empty: string }) {
  if (props.parked.length === 0) return <p class="muted">{props.empty}</p>;
  return (
    <table>
      <thead>
        <tr>
          <th>parked</th>
          <th>provider</th>
          <th>id</th>
          <th>state</th>
          <th>source</th>
          <th>delivery id</th>
          <th>result / error</th>
        </tr>
      </thead>
      <tbody>
        {props.parked.map((p) => (
          <tr data-parked={`${p.provider}/${p.id}`}>
            <td title={formatTime(p.parkedAt)}>{formatRelative(p.parkedAt, props.now)}</td>
            <td>{p.provider}</td>
            <td>
              <a href={jobHref(p.provider, p.id)} class="mono">
                {p.id}
              </a>
            </td>
            <td>
              <StateBadge state={p.observation.state} />
            </td>
            <td>
              <SourceBadge source={p.observation.source} />
            </td>
            <td class="mono">{p.observation.deliveryId ?? "—"}</td>
            <td>
              <pre>{formatJson(p.observation.error ?? p.observation.result, 300)}</pre>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** What the job page says for a job the ledger has no row of, but knows something about. */
export function MissingJobNote(props: {
  parked: readonly ParkedObservation[];
  tombstone: Tombstone | null;
  now: number;
}) {
  if (props.tombstone !== null) {
    const t = props.tombstone;
    return (
      <p data-tombstone={t.state}>
        This job settled <StateBadge state={t.state} /> at {formatTime(t.settledAt)} and retention deleted it.
        Its tombstone answers later webhooks for it <code>already-settled-pruned</code>: they change nothing
        and fire nothing.
      </p>
    );
  }
  if (props.parked.length === 0) return null;
  return (
    <section data-section="parked">
      <h2>Parked until it is registered</h2>
      <ParkedTable parked={props.parked} now={props.now} empty="" />
    </section>
  );
}
