import postgres from "postgres";
import { FinalityError, isFinalityError, toError } from "../../core/errors.js";

export type Sql = postgres.Sql;
export type TxSql = postgres.TransactionSql;

export interface PostgresClientOptions {
  url: string;
  schema?: string | undefined;
  max?: number | undefined;
  idleTimeoutSeconds?: number | undefined;
  connectTimeoutSeconds?: number | undefined;
}

// A schema name goes into search_path and an advisory-lock key: plain identifiers only, so that
// no quoting mistake can turn it into something else.
const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

export function assertSchemaName(schema: string): void {
  if (!SCHEMA_NAME.test(schema)) {
    throw new FinalityError("invalid-config", `schema "${schema}" must be a plain SQL identifier`, {
      details: { schema },
    });
  }
}

/**
 * One postgres.js pool. `search_path` is a startup parameter, so every pooled connection (and
 * every prepared statement on it) resolves the unqualified table names to the store's schema.
 */
export function createClient(options: PostgresClientOptions): Sql {
  if (options.schema !== undefined) assertSchemaName(options.schema);
  return postgres(options.url, {
    max: options.max ?? 10,
    idle_timeout: options.idleTimeoutSeconds ?? 30,
    connect_timeout: options.connectTimeoutSeconds ?? 10,
    // NOTICEs (e.g. "schema already exists, skipping") are not the application's business.
    onnotice: () => {},
    connection: {
      application_name: "finality",
      // Timestamps come back as "...+00", which every Date parser reads; a zone with a historical
      // offset in seconds (LMT) would not be.
      TimeZone: "UTC",
      ...(options.schema === undefined ? {} : { search_path: `"${options.schema}"` }),
    },
    types: {
      // bigint (identity cursors, counts, seqs, ms) as a JS number: every value Finality stores
      // is a safe integer, and `execute` callers then see the same numbers as on SQLite.
      int8: { to: 20, from: [20], serialize: (value: number) => String(value), parse: Number },
    },
  });
}

// Driver and socket codes that mean "the database cannot be reached right now".
const CONNECTION_CODES = new Set([
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EPIPE",
]);

/** SQLSTATE of a server error, or undefined for anything else. */
export function sqlState(error: unknown): string | undefined {
  return error instanceof postgres.PostgresError ? error.code : undefined;
}

/** Serialization failure or deadlock: the whole transaction may simply be run again. */
export function isTransient(error: unknown): boolean {
  const state = sqlState(error);
  return state === "40001" || state === "40P01" || isFinalityError(error, "version-conflict");
}

export function isConnectionError(error: unknown): boolean {
  const state = sqlState(error);
  if (state !== undefined) {
    // 08: connection exception; 53: out of resources (too many connections); 57P: shutting
    // down or starting up; 28: authentication; 3D000: no such database.
    return /^(08|53|57P|28)/.test(state) || state === "3D000";
  }
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && CONNECTION_CODES.has(code);
}

/**
 * Maps driver errors to FinalityError so that callers never see postgres.js types; anything
 * else (the caller's own errors thrown from inside a transaction) passes through unchanged.
 */
export function toStoreError(error: unknown, what: string): unknown {
  if (isFinalityError(error)) return error;
  if (isConnectionError(error)) {
    return new FinalityError(
      "store-unavailable",
      `${what}: database unavailable: ${toError(error).message}`,
      {
        cause: error,
        retryAfterMs: 1000,
      },
    );
  }
  const state = sqlState(error);
  if (state === undefined) return error;
  if (state === "40001" || state === "40P01") {
    return new FinalityError("version-conflict", `${what}: ${toError(error).message}`, {
      cause: error,
      details: { sqlState: state },
    });
  }
  // 23: integrity constraint violation (e.g. from a transactional effect's own SQL).
  const code = state.startsWith("23") ? "conflict" : "internal";
  return new FinalityError(code, `${what}: ${toError(error).message}`, {
    cause: error,
    details: { sqlState: state },
  });
}
