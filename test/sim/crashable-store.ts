import type { Store, StoreTx } from "../../src/store/store.js";
import { type CrashMode, SimCrash } from "./sim-types.js";

/**
 * The simulated process's power switch, at the store boundary: every write of the process goes
 * through `transaction` (the SQLite store's own claim and finish calls included, via `this`).
 * Armed, the n-th next transaction crashes the process either before its commit (its writes are
 * rolled back) or after it (durable, but nobody hears the answer); from then on every call
 * fails until the simulator restarts the process from the file.
 */
export interface CrashSwitch {
  dead: boolean;
  armed: { afterTx: number; mode: CrashMode } | null;
  /** Set while a lease sweep runs, to count a crash inside it as `crash-mid-sweep`. */
  sweeping: boolean;
  /** Called once when a crash fires, with its mode. */
  onCrash: (mode: CrashMode, midSweep: boolean) => void;
  /** Transactions committed or attempted, for the summary. */
  transactions: number;
  /** Called (once, then cleared) as the next transaction starts: a client leaving mid-commit. */
  beforeTx: (() => void) | null;
}

export function newCrashSwitch(onCrash: CrashSwitch["onCrash"]): CrashSwitch {
  return { dead: false, armed: null, sweeping: false, onCrash, transactions: 0, beforeTx: null };
}

export function crashableStore(inner: Store, power: CrashSwitch): Store {
  function down(): Promise<never> {
    return Promise.reject(new SimCrash("the process is down"));
  }
  function transaction<T>(work: (tx: StoreTx) => Promise<T>): Promise<T> {
    if (power.dead) return down();
    power.transactions++;
    const before = power.beforeTx;
    power.beforeTx = null;
    before?.();
    const arm = power.armed;
    if (arm === null) return inner.transaction(work);
    if (arm.afterTx > 0) {
      arm.afterTx--;
      return inner.transaction(work);
    }
    power.armed = null;
    power.dead = true;
    power.onCrash(arm.mode, power.sweeping);
    if (arm.mode === "before-commit") {
      return inner
        .transaction(async (tx) => {
          await work(tx);
          throw new SimCrash("crashed before commit");
        })
        .then(() => down());
    }
    return inner.transaction(work).then(() => down());
  }
  // Spread: the adapter's own methods call `this.transaction`, which is then this one.
  return { ...inner, transaction } as Store;
}
