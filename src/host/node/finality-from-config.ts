import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { FinalityConfig, StoreConfig } from "../../config/config-schema.js";
import { FinalityError } from "../../core/errors.js";
import { createFinality } from "../../engine/create-finality.js";
import type { Finality } from "../../engine/finality.js";
import { engineOf, type FinalityEngine } from "../../engine/finality-engine.js";
import type { Reconciler } from "../../engine/reconciler.js";
import { isLoopbackHost } from "../../http/loopback.js";
import type { Logger } from "../../http/request-log.js";
import { createNodeProviders } from "../../providers/node-providers.js";
import type { PostgresStoreOptions } from "../../store/postgres/postgres-store.js";
import { createSqliteStore } from "../../store/sqlite/sqlite-store.js";
import type { Store } from "../../store/store.js";
import { ledgerOptionsFromConfig, reconcilerFromConfig } from "../from-config.js";
import { holdLedger } from "./ledger-holders.js";
import { explainSqliteOpenError } from "./sqlite-access.js";

/**
 * Opens the ledger the configuration describes; with PostgreSQL, fails fast when it is unreachable.
 * The engine, for the host and the commands that read its store.
 */
export async function finalityFromConfig(config: FinalityConfig): Promise<FinalityEngine> {
  return engineOf(
    createFinality({ store: await openStore(config.store), ...ledgerOptionsFromConfig(config) }),
  );
}

/** A reconciler for one-off passes (`finality reconcile`), polling with node:crypto's adapters. */
export function reconcilerOnNode(finality: Finality, config: FinalityConfig, logger: Logger): Reconciler {
  const providers = createNodeProviders(config.providers, () => engineOf(finality).clock.now());
  return reconcilerFromConfig(finality, config, { logger, providers });
}

/**
 * The configured store, migrated. The PostgreSQL store (and its driver, pg) is imported only when
 * configured: a SQLite deployment does not carry it (`test/host/lazy-modules.test.ts`).
 */
export async function openStore(store: StoreConfig): Promise<Store> {
  if ("postgres" in store) {
    const { openPostgresStore } = await import("../../store/postgres/postgres-store.js");
    return openPostgresStore(postgresStoreOptions(store));
  }
  // Recorded before the file is opened, so that `finality restore` never replaces it under us.
  let held: { release(): void };
  try {
    held = holdLedger(store.sqlite);
  } catch (error) {
    throw explainSqliteOpenError(store.sqlite, error);
  }
  let opened: Store;
  try {
    opened = createSqliteStore({
      path: store.sqlite,
      synchronous: store.synchronous,
      cacheMiB: store.cacheMiB,
    });
  } catch (error) {
    held.release();
    throw explainSqliteOpenError(store.sqlite, error);
  }
  const close = opened.close.bind(opened);
  opened.close = async () => {
    try {
      await close();
    } finally {
      held.release();
    }
  };
  return opened;
}

/**
 * For commands that only read or copy: a SQLite file that is not there is a mistake (a typo in
 * `--db`, the wrong directory), not a new ledger to create.
 */
export function requireExistingDatabase(store: StoreConfig): void {
  if (!("sqlite" in store) || store.sqlite === ":memory:" || existsSync(store.sqlite)) return;
  throw new FinalityError(
    "not-found",
    `no database at ${resolve(store.sqlite)}: check --db, FINALITY_DB or store.sqlite in the configuration (\`finality serve\` or \`finality migrate\` creates one)`,
    { details: { field: "store.sqlite" } },
  );
}

/** Without an API token the JSON API is open: only loopback may reach it. */
export function assertSafeBinding(config: FinalityConfig): void {
  if (config.server.apiToken === undefined && !isLoopbackHost(config.server.host)) {
    throw new FinalityError(
      "invalid-config",
      `config error: server.host: refusing to listen on ${config.server.host} without an API token; set FINALITY_API_TOKEN (or server.apiToken), or listen on 127.0.0.1`,
      { details: { field: "server.host" } },
    );
  }
}

/** The PostgreSQL store's options from its configuration (seconds there, milliseconds here). */
export function postgresStoreOptions(
  store: Extract<StoreConfig, { postgres: string }>,
): PostgresStoreOptions {
  const ms = (seconds: number | undefined) =>
    seconds === undefined ? undefined : Math.round(seconds * 1000);
  const options: PostgresStoreOptions = {
    url: store.postgres,
    ...(store.schema ? { schema: store.schema } : {}),
    ...(store.poolSize === undefined ? {} : { max: store.poolSize }),
    ...(store.connectTimeoutSeconds === undefined
      ? {}
      : { connectTimeoutSeconds: store.connectTimeoutSeconds }),
  };
  const statement = ms(store.statementTimeoutSeconds);
  const lock = ms(store.lockTimeoutSeconds);
  const idle = ms(store.idleInTransactionTimeoutSeconds);
  if (statement !== undefined) options.statementTimeoutMs = statement;
  if (lock !== undefined) options.lockTimeoutMs = lock;
  if (idle !== undefined) options.idleInTransactionTimeoutMs = idle;
  const query = ms(store.queryTimeoutSeconds);
  if (query !== undefined) options.queryTimeoutMs = query;
  if (store.groupCommitMaxBatch !== undefined) options.groupCommitMaxBatch = store.groupCommitMaxBatch;
  if (store.groupCommitMaxWaitMs !== undefined) options.groupCommitMaxWaitMs = store.groupCommitMaxWaitMs;
  return options;
}
