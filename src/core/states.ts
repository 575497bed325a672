/**
 * Canonical job states. Provider adapters map their own state names onto these.
 *
 * | state     | rank | terminal |
 * |-----------|------|----------|
 * | pending   | 0    | no       |
 * | running   | 1    | no       |
 * | succeeded | 2    | yes      |
 * | failed    | 2    | yes      |
 * | cancelled | 2    | yes      |
 * | expired   | 2    | yes      |
 * | lost      | 2    | yes      |
 *
 * Any other name ranks -1: it is recorded, never applied.
 */
export const CANONICAL_STATES = [
  "pending",
  "running",
  "succeeded",
  "failed",
  "cancelled",
  "expired",
  "lost",
] as const;
export type CanonicalState = (typeof CANONICAL_STATES)[number];

export const TERMINAL_STATES = ["succeeded", "failed", "cancelled", "expired", "lost"] as const;
export type TerminalState = (typeof TERMINAL_STATES)[number];

const RANKS: Readonly<Record<CanonicalState, number>> = {
  pending: 0,
  running: 1,
  succeeded: 2,
  failed: 2,
  cancelled: 2,
  expired: 2,
  lost: 2,
};

export function isCanonicalState(name: string): name is CanonicalState {
  return Object.hasOwn(RANKS, name);
}

/** Rank of a state name; -1 for a name that is not canonical. */
export function rankOf(name: string): number {
  return isCanonicalState(name) ? RANKS[name] : -1;
}

export function isTerminal(name: string): name is TerminalState {
  return rankOf(name) === 2;
}

/** Where an observation came from. Every source goes through the same ingest path. */
export const SOURCES = ["webhook", "reconcile", "worker", "lease", "api", "intent", "discovery"] as const;
export type Source = (typeof SOURCES)[number];
