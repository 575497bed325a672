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
  /**
   * Called (once, then cleared) as the next transaction starts: a client leaving mid-commit, or
   * another call committing first (awaited, then the transaction starts).
   */
  beforeTx: (() => void | Promise<void>) | null;
  /**
   * Called (once, then cleared) when a transaction has looked for a claimable run, saying
   * whether it found one: a client leaving while its claim commits, past the claim's own look
   * at its signal, or once its claim waits.
   */
  onPick: ((found: boolean) => void) | null;
}

export function newCrashSwitch(onCrash: CrashSwitch["onCrash"]): CrashSwitch {
  return {
    dead: false,
    armed: null,
    sweeping: false,
    onCrash,
    transactions: 0,
    beforeTx: null,
    onPick: null,
  };
}

/** `tx`, calling `power.onPick` (once) when it looks for a run to claim. */
function watchPick(tx: StoreTx, power: CrashSwitch): StoreTx {
  const pickClaimableRun: StoreTx["pickClaimableRun"] = async (...args) => {
    const run = await tx.pickClaimableRun(...args);
    const hook = power.onPick;
    power.onPick = null;
    hook?.(run !== null);
    return run;
  };
  return new Proxy(tx, {
    get(target, prop, receiver) {
      if (prop === "pickClaimableRun") return pickClaimableRun;
      const value = Reflect.get(target, prop, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

export function crashableStore(inner: Store, power: CrashSwitch): Store {
  function down(): Promise<never> {
    return Promise.reject(new SimCrash("the process is down"));
  }
  function transaction<T>(work: (tx: StoreTx) => Promise<T>): Promise<T> {
    if (power.dead) return down();
    const before = power.beforeTx;
    power.beforeTx = null;
    const first = before?.();
    return first instanceof Promise ? first.then(() => begin(work)) : begin(work);
  }
  function begin<T>(given: (tx: StoreTx) => Promise<T>): Promise<T> {
    if (power.dead) return down();
    power.transactions++;
    const work = power.onPick === null ? given : (tx: StoreTx) => given(watchPick(tx, power));
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
