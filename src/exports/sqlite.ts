// `finality/sqlite`: the ledger on an embedded SQLite file (better-sqlite3).
export { createFinality } from "../engine/create-finality.js";
export { createSqliteStore, type SqliteStoreOptions } from "../store/sqlite/sqlite-store.js";
