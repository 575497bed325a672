import type { Store, StoreTx } from "../../src/store/store.js";

/** The store, with `inClaim` called inside each transaction whose claim picked a run. */
export function onEachPick(store: Store, inClaim: () => void): Store {
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop !== "transaction") {
        const value = Reflect.get(target, prop, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      }
      const transaction: Store["transaction"] = (work) =>
        target.transaction((tx) =>
          work(
            new Proxy(tx, {
              get(inner, name, r) {
                if (name === "pickClaimableRun")
                  return async (...args: Parameters<StoreTx["pickClaimableRun"]>) => {
                    const run = await inner.pickClaimableRun(...args);
                    if (run !== null) inClaim();
                    return run;
                  };
                const value = Reflect.get(inner, name, r);
                return typeof value === "function" ? value.bind(inner) : value;
              },
            }),
          ),
        );
      return transaction;
    },
  });
}
