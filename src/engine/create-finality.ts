import { createSqliteStore } from "../store/sqlite/sqlite-store.js";
import { type Finality, type FinalityOptions, finalityOn } from "./finality.js";

/** The ledger: on the store given, or on the embedded SQLite file `store.sqlite` (opened and migrated). */
export function createFinality(options: FinalityOptions): Finality {
  const store =
    "transaction" in options.store
      ? options.store
      : createSqliteStore({
          path: options.store.sqlite,
          synchronous: options.store.synchronous,
          cacheMiB: options.store.cacheMiB,
        });
  return finalityOn({ ...options, store });
}
