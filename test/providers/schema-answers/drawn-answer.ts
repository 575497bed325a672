import fc from "fast-check";
import type { CanonicalState } from "../../../src/core/states.js";

/**
 * One answer a provider's schema allows, with what its documentation says it means: the canonical
 * state, or null when the status is not one the documentation lists (recorded, never applied).
 * The expectation is written from the provider's documents, not read from the adapter's state
 * table, so a wrong table shows.
 */
export interface DrawnAnswer {
  body: Record<string, unknown>;
  expected: CanonicalState | null;
}

/** The answers one kind of provider object can give about the object named `id`. */
export interface AnswerSource {
  /** Not ended: a waiting or running status, or one the schema does not list. */
  open(id: string): fc.Arbitrary<DrawnAnswer>;
  /** Ended: a terminal status, as the object keeps answering from then on. */
  ended(id: string): fc.Arbitrary<DrawnAnswer>;
}

/** A status drawn from a documented table (status → canonical state) as an answer's meaning. */
export function statusFrom(
  table: Readonly<Record<string, CanonicalState>>,
): fc.Arbitrary<{ status: string; expected: CanonicalState }> {
  return fc.constantFrom(...Object.entries(table)).map(([status, expected]) => ({ status, expected }));
}

/**
 * A lifetime of answers: some open answers in any order (a provider's replicas may answer an
 * older state after a newer one), then the ended answer, repeated as a poller would see it again.
 */
export function answerSequence(source: AnswerSource, id: string): fc.Arbitrary<DrawnAnswer[]> {
  return fc
    .tuple(fc.array(source.open(id), { maxLength: 5 }), source.ended(id), fc.nat({ max: 2 }))
    .map(([open, ended, repeats]) => [...open, ...Array.from({ length: repeats + 1 }, () => ended)]);
}
