import type { Effect, EffectStatus } from "../core/model.js";
import type { BoundedCount } from "../store/overview-reads.js";
import type { Page, Store } from "../store/store.js";
import { EffectTable } from "./effect-table.js";
import { formatCount, queryString } from "./format.js";
import { COUNT_CAP } from "./overview-data.js";

const EFFECT_STATUSES: readonly EffectStatus[] = ["dead", "pending", "delivering", "delivered"];
/** Rows of each section of the summary (no status chosen); a chosen status pages by EFFECT_PAGE_ROWS. */
export const SUMMARY_ROWS = 25;
export const EFFECT_PAGE_ROWS = 50;

export interface EffectsView {
  /** One status, paged; null for the summary (dead, then pending). */
  status: EffectStatus | null;
  cursor: string | undefined;
  counts: Record<EffectStatus, BoundedCount>;
  sections: { status: EffectStatus; page: Page<Effect> }[];
}

export function parseEffectStatus(value: string | undefined): EffectStatus | null {
  return (EFFECT_STATUSES as readonly (string | undefined)[]).includes(value)
    ? (value as EffectStatus)
    : null;
}

export async function loadEffects(store: Store, status: EffectStatus | null, cursor: string | undefined) {
  const counted = await Promise.all(EFFECT_STATUSES.map((s) => store.countEffects(s, COUNT_CAP)));
  const counts = Object.fromEntries(EFFECT_STATUSES.map((s, i) => [s, counted[i]])) as EffectsView["counts"];
  const statuses: EffectStatus[] = status === null ? ["dead", "pending"] : [status];
  const sections = await Promise.all(
    statuses.map(async (s) => ({
      status: s,
      page: await store.listEffects({
        status: s,
        limit: status === null ? SUMMARY_ROWS : EFFECT_PAGE_ROWS,
        cursor,
      }),
    })),
  );
  return { status, cursor, counts, sections } satisfies EffectsView;
}

/** What a retry's redirect says (codes in the query string, so a link cannot inject a message). */
export function retryFlash(query: Record<string, string>): { message: string; error: boolean } | null {
  if (query.retried) {
    return {
      message: `Effect ${query.retried} re-armed: it is delivered again now, under the same idempotency key.`,
      error: false,
    };
  }
  switch (query["retry-error"]) {
    case undefined:
      return null;
    case "not-found":
      return { message: "No effect with that id.", error: true };
    case "conflict":
      return {
        message: "That effect is being delivered or was delivered; only pending or dead effects are retried.",
        error: true,
      };
    default:
      return { message: "The retry failed; see the service log.", error: true };
  }
}

export function EffectsPage(props: { view: EffectsView; now: number; back: string }) {
  const { view } = props;
  return (
    <>
      <h1>Effects</h1>
      <div class="cards">
        {EFFECT_STATUSES.map((status) => (
          <div
            class={status === "dead" && view.counts.dead.count > 0 ? "card alert" : "card"}
            data-count={`effects-${status}`}
          >
            <div class="label">{status}</div>
            <a class="value" href={`/effects${queryString({ status })}`}>
              {formatCount(view.counts[status])}
            </a>
          </div>
        ))}
      </div>
      {view.sections.map(({ status, page }) => (
        <section data-section={status}>
          <h2>{status}</h2>
          <EffectTable
            effects={page.items}
            now={props.now}
            back={props.back}
            empty={`No ${status} effects.`}
          />
          {page.nextCursor !== null && (
            <div class="pager">
              <a
                href={`/effects${queryString({ status, cursor: view.status === null ? undefined : page.nextCursor })}`}
                id={`more-${status}`}
              >
                {view.status === null ? `all ${status} →` : "next page →"}
              </a>
            </div>
          )}
        </section>
      ))}
    </>
  );
}
