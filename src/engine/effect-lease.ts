import type { Clock } from "../core/clock.js";
import type { Effect } from "../core/model.js";
import type { Store } from "../store/store.js";
import { DeliveryError } from "./delivery-error.js";
import type { DeliveryStop } from "./effect-target.js";

/** A claimed delivery's lease while its attempt runs. */
export interface HeldLease {
  /**
   * Aborted (with a DeliveryError saying why) when the attempt must stop: another dispatcher took
   * the claim over, the lease is about to run out without having been renewed, or the delivery's
   * timeout (`within`) has passed. Made when first read: a delivery asks for it once.
   */
  readonly signal: AbortSignal;
  /** Arms the delivery's own timeout: `signal` is also aborted ("delivery timed out") `ms` from now. */
  within(ms: number): AbortSignal;
  /** Arms the same timeout and answers the stop without making an AbortSignal (see DeliveryStop). */
  stopAfter(ms: number): DeliveryStop;
  /**
   * `work`, or the reason the attempt was stopped once it is, whichever comes first. Work that
   * honours `signal` gets a turn of the event loop to fail with its own, fuller message.
   */
  race<T>(work: Promise<T>): Promise<T>;
  /**
   * Stops renewing; resolves, once a renewal in flight has answered, with the `lease_until` to
   * finish the row with, or null when the claim was lost (finishing would change nothing).
   */
  release(): Promise<number | null>;
}

/**
 * Holds the lease of one claimed delivery for as long as its attempt runs. Another dispatcher
 * claims a `delivering` row once `lease_until` has passed, so a delivery still in flight then
 * would be sent a second time, in parallel. Two things prevent it:
 * - a heartbeat renews the lease every third of its length while the attempt runs, so a healthy,
 *   slow receiver keeps its one delivery however the lease and timeout are set;
 * - the attempt is stopped just before the last lease it knows it holds runs out, so that a
 *   stalled store (renewals that never answer: a starved pool, a frozen database) cannot leave a
 *   delivery in flight past its lease either.
 * The guard counts from the claim, like the lease, so it covers the whole attempt: loading the job
 * on a starved store too, not only the delivery's own timeout that starts once the job is loaded.
 * Times: the lease values are on `clock` (as the claim's); the timers wait the same differences.
 */
export function holdEffectLease(options: {
  store: Pick<Store, "extendEffectLease">;
  clock: Clock;
  effect: Pick<Effect, "id" | "leaseUntil">;
  /** The `now` the claim was made with (its lease started then). */
  claimedAt: number;
  leaseMs: number;
}): HeldLease {
  const { store, clock, effect, leaseMs } = options;
  // Stop this long before the lease runs out: the timers and the other dispatchers' clocks are
  // not exact, and the stop itself takes a moment to reach the transport.
  const marginMs = Math.min(1000, leaseMs / 10);
  let heldUntil = effect.leaseUntil ?? options.claimedAt + leaseMs;
  let lost = false;
  let released = false;
  let renewing: Promise<void> | null = null;
  // Why the attempt was stopped (the first reason wins), and who waits on it. One AbortController,
  // made only when a transport or handler asks for the signal, and plain callbacks for `race`:
  // each AbortSignal and EventTarget listener costs a delivery thousands of instructions.
  let stopped: DeliveryError | null = null;
  let controller: AbortController | null = null;
  const onStop = new Set<(reason: DeliveryError) => void>();

  const stop = (message: string) => {
    if (stopped !== null) return;
    stopped = new DeliveryError(message);
    controller?.abort(stopped);
    for (const fail of onStop) fail(stopped);
    onStop.clear();
  };
  const after = (ms: number, run: () => void) => unref(setTimeout(run, Math.max(0, ms)));
  let deadline: ReturnType<typeof setTimeout> | undefined;
  const armGuard = () =>
    after(heldUntil - marginMs - clock.now(), () =>
      stop("delivery stopped: its lease was about to run out and could not be renewed"),
    );
  let guard = armGuard();
  const heartbeat = unref(setInterval(renew, Math.max(1, Math.floor(leaseMs / 3))));

  function renew(): void {
    if (renewing !== null || released) return;
    const until = clock.now() + leaseMs;
    renewing = store
      .extendEffectLease(effect.id, heldUntil, until)
      .then(
        (held) => {
          if (!held) {
            lost = true;
            stop("delivery stopped: another dispatcher took over its claim");
            return;
          }
          heldUntil = until;
          clearTimeout(guard);
          if (!released) guard = armGuard();
        },
        () => {
          // The store is busy or away: the guard stops the attempt if it stays so.
        },
      )
      .finally(() => {
        renewing = null;
      });
  }

  const signal = (): AbortSignal => {
    if (controller === null) {
      controller = new AbortController();
      if (stopped !== null) controller.abort(stopped);
    }
    return controller.signal;
  };
  const armDeadline = (ms: number) => {
    if (deadline !== undefined) clearTimeout(deadline);
    deadline = after(ms, () => stop("delivery timed out"));
  };
  const deliveryStop: DeliveryStop = {
    get reason() {
      return stopped;
    },
    onStop(listener) {
      if (stopped !== null) return () => {};
      onStop.add(listener);
      return () => onStop.delete(listener);
    },
    get signal() {
      return signal();
    },
  };

  return {
    get signal() {
      return signal();
    },
    within(ms) {
      armDeadline(ms);
      return signal();
    },
    stopAfter(ms) {
      armDeadline(ms);
      return deliveryStop;
    },
    race(work) {
      return new Promise((resolve, reject) => {
        const fail = (reason: DeliveryError) => setTimeout(() => reject(reason), 0);
        if (stopped !== null) fail(stopped);
        else onStop.add(fail);
        work.then(
          (value) => {
            onStop.delete(fail);
            resolve(value);
          },
          (error) => {
            onStop.delete(fail);
            reject(error);
          },
        );
      });
    },
    async release() {
      released = true;
      if (deadline !== undefined) clearTimeout(deadline);
      clearTimeout(guard);
      clearInterval(heartbeat);
      if (renewing !== null) await renewing;
      return lost ? null : heldUntil;
    },
  };
}

/** Timers must not keep a Node process alive on their own (Workers have no `unref`). */
function unref<T>(timer: T): T {
  (timer as { unref?: () => void }).unref?.();
  return timer;
}
