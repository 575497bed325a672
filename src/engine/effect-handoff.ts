import type { Effect } from "../core/model.js";

/**
 * A dispatcher in this process that takes the effects its ledger enqueues as they commit, already
 * claimed by the transaction that enqueued them: no claim transaction, no wait for a poke.
 */
export interface EffectHandoff {
  /**
   * The lease to enqueue an effect with, claimed, when the dispatcher has room for one more;
   * null when it has none (the row is enqueued pending and claimed as usual).
   */
  leaseMsForNext(): number | null;
  /** An effect enqueued claimed, once its transaction has committed. */
  take(effect: Effect): void;
}
