import type { Store, StoreTx } from "../../src/store/store.js";

/** The store, each transaction's methods that `overrides(tx)` names replaced by its own. */
export function overTx(store: Store, overrides: (tx: StoreTx) => Partial<StoreTx>): Store {
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop !== "transaction") {
        const value = Reflect.get(target, prop, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      }
      const transaction: Store["transaction"] = (work) =>
        target.transaction((tx) => {
          const replaced = overrides(tx);
          return work(
            new Proxy(tx, {
              get(inner, name, r) {
                if (Object.hasOwn(replaced, name)) return replaced[name as keyof StoreTx];
                const value = Reflect.get(inner, name, r);
                return typeof value === "function" ? value.bind(inner) : value;
              },
            }),
          );
        });
      return transaction;
    },
  });
}

/** The store, with `inClaim` called inside each transaction whose claim picked a run. */
export function onEachPick(store: Store, inClaim: () => void): Store {
  return overTx(store, (tx) => ({
    async pickClaimableRun(...args) {
      const run = await tx.pickClaimableRun(...args);
      if (run !== null) inClaim();
      return run;
    },
  }));
}
