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
