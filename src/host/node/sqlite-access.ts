import { type Stats, statSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { FinalityError } from "../../core/errors.js";

/**
 * SQLite answers a ledger this process may not write with `attempt to write a readonly database`,
 * naming neither the file nor the cause. Every command opens the ledger for writing (migrations,
 * WAL's `-wal`/`-shm` files and the holder file of ledger-holders.ts beside it), so the answer is
 * the file, who may write it and who asks. Other errors pass through unchanged.
 */
export function explainSqliteOpenError(path: string, error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string" || !/^(SQLITE_(READONLY|CANTOPEN)|EACCES$|EPERM$|EROFS$)/.test(code))
    return error;
  const file = resolve(path);
  const dir = dirname(file);
  const fix = "run the command as the user that runs `finality serve`, or give this user write access";
  const fileStat = statOrUndefined(file);
  const dirStat = statOrUndefined(dir);
  let why: string;
  if (fileStat && !writableByUs(fileStat)) {
    why = `${file} is not writable by this process (uid ${euid()}; the file is ${describe(fileStat)})`;
  } else if (dirStat && !writableByUs(dirStat)) {
    why = `cannot create files in ${dir} (uid ${euid()}; the directory is ${describe(dirStat)}): SQLite keeps ${basename(file)}-wal and ${basename(file)}-shm beside the database, and Finality ${basename(file)}.pid-<pid>`;
  } else {
    why = `${file} cannot be written (${code}; a read-only file system?)`;
  }
  return new FinalityError("store-unavailable", `${why}; ${fix}`, {
    details: { field: "store.sqlite", file, sqlite: code },
    cause: error,
  });
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

// The effective ids decide access, as the kernel does (access(2) would ask about the real ones).
function euid(): number {
  return process.geteuid?.() ?? -1;
}

function writableByUs(stat: Stats): boolean {
  const uid = euid();
  if (uid === 0 || uid === -1) return true;
  if (stat.uid === uid) return (stat.mode & 0o200) !== 0;
  const groups = [process.getegid?.(), ...(process.getgroups?.() ?? [])];
  if (groups.includes(stat.gid)) return (stat.mode & 0o020) !== 0;
  return (stat.mode & 0o002) !== 0;
}

function describe(stat: Stats): string {
  return `owned by uid ${stat.uid}, gid ${stat.gid}, mode ${(stat.mode & 0o777).toString(8).padStart(4, "0")}`;
}
