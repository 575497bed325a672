import type { Effect, Job } from "../core/model.js";

/**
 * A dispatcher in this process that takes the effects its ledger enqueues as they commit, already
 * claimed by the transaction that enqueued them: no claim transaction, no wait for a poke.
 */
export interface EffectHandoff {
  /**
   * The lease to enqueue an effect with, claimed, when the dispatcher has room for one more;
   * null when it has none (the row is enqueued pending and claimed as usual). Asking changes
   * nothing: an effect planned and then not enqueued costs the dispatcher nothing.
   */
  leaseMsForNext(): number | null;
  /** An effect was enqueued pending for want of room: the next slot to free claims rows. */
  enqueuedPending(): void;
  /**
   * An effect enqueued claimed, once its transaction has committed; with `job` when that is the
   * job as the transaction committed it (its first attempt then reads no job from the store).
   */
  take(effect: Effect, job?: Job): void;
}
