import type { ParkedObservation, Tombstone } from "../store/lifecycle-store.js";
import type { Page, Store } from "../store/store.js";
import { SourceBadge, StateBadge } from "./components.js";
import { type Column, DataTable } from "./data-table.js";
import { formatJson, formatRelative, formatTime, jobHref, queryString } from "./format.js";

export const PARKED_PAGE_ROWS = 50;

/**
 * The early-completion inbox: observations for jobs nobody registered yet (providers with
 * `registered-only`). Each is applied, in arrival order, when its job is registered, or pruned
 * after `retention.parkedDays`.
 */
export async function loadParked(store: Store, query: { provider?: string; id?: string; cursor?: string }) {
  return store.listParked({ ...query, limit: PARKED_PAGE_ROWS });
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

function ParkedTable(props: { parked: readonly ParkedObservation[]; now: number; empty: string }) {
  const columns: Column<ParkedObservation>[] = [
    {
      head: "parked",
      title: (p) => formatTime(p.parkedAt),
      cell: (p) => formatRelative(p.parkedAt, props.now),
    },
    { head: "provider", cell: (p) => p.provider },
    {
      head: "id",
      cell: (p) => (
        <a href={jobHref(p.provider, p.id)} class="mono">
          {p.id}
        </a>
      ),
    },
    { head: "state", cell: (p) => <StateBadge state={p.observation.state} /> },
    { head: "source", cell: (p) => <SourceBadge source={p.observation.source} /> },
    { head: "delivery id", class: "mono", cell: (p) => p.observation.deliveryId ?? "—" },
    {
      head: "result / error",
      cell: (p) => <pre>{formatJson(p.observation.error ?? p.observation.result, 300)}</pre>,
    },
  ];
  return (
    <DataTable
      rows={props.parked}
      columns={columns}
      empty={props.empty}
      rowAttrs={(p) => ({ "data-parked": `${p.provider}/${p.id}` })}
    />
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
