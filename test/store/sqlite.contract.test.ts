import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { tempDir } from "../helpers/temp-dir.js";
import { runStoreContract } from "./contract.js";

runStoreContract("sqlite file", async () => {
  const dir = tempDir("finality-contract-");
  const path = dir.file("ledger.db");
  return {
    store: createSqliteStore({ path }),
    reopen: async () => createSqliteStore({ path }),
    openSecond: async () => createSqliteStore({ path }),
    cleanup: async () => dir.cleanup(),
  };
});
