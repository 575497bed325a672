// `finality/postgres`: the ledger on PostgreSQL (node-postgres).
export {
  createPostgresStore,
  openPostgresStore,
  type PostgresStore,
  type PostgresStoreOptions,
} from "../store/postgres/postgres-store.js";
