import { copyFileSync, existsSync, realpathSync, renameSync, rmSync } from "node:fs";
import Database from "better-sqlite3";
import { FinalityError } from "../../core/errors.js";
import { pendingSqliteMigrations } from "./sqlite-migrate.js";

/**
 * An online, consistent copy of a live SQLite ledger through SQLite's backup API. The copy is
 * taken in one step, inside one read transaction: in WAL mode writers carry on meanwhile, and
 * the copy is the database as of the moment the step began (a step-by-step copy would restart
 * whenever another process commits, which under steady webhook traffic is all the time).
 */
export async function backupSqlite(
  source: string,
  target: string,
): Promise<{ pages: number; bytes: number }> {
  if (!existsSync(source))
    throw new FinalityError("not-found", `no database at ${source}`, { details: { source } });
  if (existsSync(target)) {
    throw new FinalityError("conflict", `${target} exists; choose a new file for the backup`, {
      details: { target },
    });
  }
  const db = new Database(source, { readonly: true, fileMustExist: true });
  try {
    db.pragma("busy_timeout = 5000");
    let pages = 0;
    await db.backup(target, {
      progress: ({ totalPages }) => {
        pages = totalPages;
        return Math.max(totalPages, 1) * 2;
      },
    });
    const pageSize = db.pragma("page_size", { simple: true }) as number;
    selfContained(target);
    return { pages, bytes: pages * pageSize };
  } finally {
    db.close();
  }
}

/**
 * The copy keeps the source's WAL mode, so every later read-only open of it (the check below, a
 * restore) would leave `-wal` and `-shm` files beside it. In rollback-journal mode the backup is
 * one file; `serve` turns WAL back on when it opens a restored ledger.
 */
function selfContained(file: string): void {
  const copy = new Database(file, { fileMustExist: true });
  try {
    copy.pragma("journal_mode = DELETE");
  } finally {
    copy.close();
  }
}

interface BackupCheck {
  integrity: string;
  pendingMigrations: number;
  jobs: number;
  events: number;
}

/** Opens a backup read-only and checks it: `PRAGMA integrity_check`, schema, row counts. */
export function checkSqliteBackup(file: string): BackupCheck {
  if (!existsSync(file)) throw new FinalityError("not-found", `no backup at ${file}`, { details: { file } });
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const integrity = (db.pragma("integrity_check") as { integrity_check: string }[])
      .map((row) => row.integrity_check)
      .join("; ");
    const count = (table: string) => db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;
    return {
      integrity,
      pendingMigrations: pendingSqliteMigrations(db),
      jobs: count("jobs"),
      events: count("events"),
    };
  } finally {
    db.close();
  }
}

/**
 * Puts a checked backup in place of `target`. The service must be stopped first: a running
 * process keeps writing its own copy. Refuses a backup that fails its integrity check, and an
 * existing target unless `force`.
 */
export function restoreSqlite(
  backup: string,
  target: string,
  options: { force?: boolean } = {},
): BackupCheck {
  const check = checkSqliteBackup(backup);
  if (check.integrity !== "ok") {
    throw new FinalityError("invalid-request", `${backup} fails its integrity check: ${check.integrity}`, {
      details: { backup },
    });
  }
  if (existsSync(target) && realpathSync(target) === realpathSync(backup)) {
    throw new FinalityError("invalid-request", `${backup} is the database itself; restore from a copy`, {
      details: { backup, target },
    });
  }
  if (existsSync(target) && !options.force) {
    throw new FinalityError("conflict", `${target} exists; stop the service and pass --force to replace it`, {
      details: { target },
    });
  }
  // Copied beside the target first: if the copy fails, the database that was there is untouched.
  const incoming = `${target}.restoring`;
  copyFileSync(backup, incoming);
  // The old write-ahead log belongs to the old database: applied to the restored one it would corrupt it.
  for (const suffix of ["-wal", "-shm"]) rmSync(`${target}${suffix}`, { force: true });
  renameSync(incoming, target);
  return check;
}
