import type { Environment } from "../config/env-overrides.js";
import { type ConfigFlags, loadConfig } from "../config/load-config.js";
import { FinalityError } from "../core/errors.js";
import { type PruneCounts, pruneOnce } from "../engine/retention.js";
import { retentionWindowsFromConfig } from "../host/from-config.js";
import { openStore, requireExistingDatabase } from "../host/node/finality-from-config.js";
import { refuseWhileHeld } from "../host/node/ledger-holders.js";
import { PRUNE_TARGETS, type PruneTarget } from "../store/housekeeping-store.js";
import { backupSqlite, checkSqliteBackup, restoreSqlite } from "../store/sqlite/sqlite-backup.js";

interface CommandOptions {
  configFile?: string | undefined;
  flags: ConfigFlags;
  env: Environment;
}

/**
 * `finality prune [--dry-run]`: one retention pass with the configured windows. On a terminal,
 * `onProgress` draws the rows removed so far per table.
 */
export async function prune(
  options: CommandOptions & { dryRun: boolean; onProgress?: (target: PruneTarget, total: number) => void },
): Promise<{ dryRun: boolean; rows: PruneCounts; sizeBytes: number }> {
  // Windows and the store only: no secret is read, and a missing file is a typo, not a ledger.
  const config = loadConfig({ ...configOptions(options), resolveSecrets: false });
  requireExistingDatabase(config.store);
  const store = await openStore(config.store);
  try {
    const totals = Object.fromEntries(PRUNE_TARGETS.map((t) => [t, 0])) as PruneCounts;
    const rows = await pruneOnce(store, retentionWindowsFromConfig(config), Date.now(), {
      dryRun: options.dryRun,
      onProgress: (target, n) => {
        totals[target] += n;
        options.onProgress?.(target, totals[target]);
      },
    });
    return { dryRun: options.dryRun, rows, sizeBytes: (await store.housekeepingStats()).sizeBytes };
  } finally {
    await store.close();
  }
}

function configOptions(options: CommandOptions) {
  return { file: options.configFile, env: options.env, flags: options.flags };
}

function sqlitePath(options: CommandOptions, what: string): string {
  const config = loadConfig({ ...configOptions(options), resolveSecrets: false });
  if (!("sqlite" in config.store)) {
    throw new FinalityError(
      "invalid-request",
      `${what} works on SQLite files; for PostgreSQL use pg_dump / pg_restore (see docs/operations.md, "Backup and restore")`,
    );
  }
  return config.store.sqlite;
}

/** `finality backup <file>`: a consistent online copy of the configured SQLite database. */
export async function backup(options: CommandOptions & { target: string }) {
  const source = sqlitePath(options, "backup");
  requireExistingDatabase({ sqlite: source, synchronous: "FULL" });
  const copied = await backupSqlite(source, options.target);
  return { source, target: options.target, ...copied, ...checkSqliteBackup(options.target) };
}

/** `finality restore <backup> [--force]`: checks a backup and puts it in place of the configured database. */
export async function restore(options: CommandOptions & { backup: string; force: boolean }) {
  const target = sqlitePath(options, "restore");
  // A process with the file open would keep writing into the replaced file: lost on its restart.
  refuseWhileHeld(target, "restore");
  return {
    backup: options.backup,
    target,
    ...restoreSqlite(options.backup, target, { force: options.force }),
  };
}
