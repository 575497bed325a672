import type { Observation } from "../core/model.js";
import type { CanonicalState } from "../core/states.js";

/** A provider's state names → canonical states. Names absent from a table are not guessed. */
export type StateTable = Readonly<Record<string, CanonicalState>>;

/**
 * The canonical state for a provider's name, or the name itself when the table does not know it:
 * the reducer then records the observation as `unknown-state` and never applies it, so a state a
 * provider adds later is visible in the audit trail instead of being forced into a wrong bucket.
 */
export function mapState(table: StateTable, raw: string): string {
  return Object.hasOwn(table, raw) ? (table[raw] as CanonicalState) : raw;
}

/**
 * A status answer as the reconcile observation every poller starts from: its id, the state already
 * mapped from `raw`, and the answer's latest time when it has one (the reducer orders by it).
 */
export function polledObservation(
  provider: string,
  id: unknown,
  state: string,
  raw: string,
  kind: string,
  updateTime: number | undefined,
): Observation {
  const observation: Observation = {
    provider,
    id: String(id),
    state,
    rawState: raw,
    source: "reconcile",
    kind,
  };
  if (updateTime !== undefined) observation.updateTime = updateTime;
  return observation;
}
