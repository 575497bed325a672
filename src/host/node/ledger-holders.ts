import { readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { FinalityError } from "../../core/errors.js";

// Which processes have a SQLite ledger open. `finality restore --force` onto the file of a
// running `serve` used to succeed: the service kept writing into the replaced file (its open
// descriptors), answered `200 applied`, and after a restart the acknowledged jobs were gone.
//
// Each process that opens the ledger writes `<db>.pid-<pid>` beside it (pid, host, command, the
// kernel's start time of the process) and removes it when it closes the ledger or exits. A file
// left by a crash names a process that is gone (or a pid reused by another process, which a
// different start time gives away), so it never blocks: that is the liveness check. Several
// processes may hold one file at once (two `serve` on one SQLite file serialise on its write
// lock, by design); only what replaces the file refuses while any holds it.

/** What a holder file says. */
interface LedgerHolder {
  pid: number;
  host: string;
  /** The command line after the program: `serve --db ./finality.db`. */
  command: string;
  startedAt: string;
  /** Field 22 of /proc/<pid>/stat (Linux): tells a live holder from a later process given its pid. */
  processStart?: string;
}

const MARK = ".pid-";

/** The path every holder file of `db` starts with: the file's real path (a symlink names the same ledger). */
function holderPrefix(db: string): string {
  const dir = resolve(dirname(db));
  let real = dir;
  try {
    real = realpathSync(dir);
  } catch {
    // The directory is not there yet: no holder can be either.
  }
  return join(real, `${basename(db)}${MARK}`);
}

function processStart(pid: number): string | undefined {
  try {
    // The command name (field 2) may hold spaces and parentheses: count fields after its ")".
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

/** Records that this process has `db` open; `release` (or the process's exit) removes the record. */
export function holdLedger(db: string): { release(): void } {
  if (db === ":memory:") return { release() {} };
  const file = `${holderPrefix(db)}${process.pid}`;
  const start = processStart(process.pid);
  const holder: LedgerHolder = {
    pid: process.pid,
    host: hostname(),
    command: process.argv.slice(2).join(" "),
    startedAt: new Date().toISOString(),
    ...(start !== undefined ? { processStart: start } : {}),
  };
  writeFileSync(file, `${JSON.stringify(holder)}\n`);
  const release = () => {
    process.off("exit", release);
    rmSync(file, { force: true });
  };
  // A process that exits without closing the ledger (an uncaught error) removes it too; a
  // SIGKILL cannot, and the liveness check covers that.
  process.on("exit", release);
  return { release };
}

function isAlive(holder: LedgerHolder): boolean {
  // Another machine's process (a shared volume) cannot be checked from here: it counts as live.
  if (holder.host !== hostname()) return true;
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  const start = processStart(holder.pid);
  return holder.processStart === undefined || start === undefined || start === holder.processStart;
}

/** The processes that have `db` open now, other than this one; files of dead ones are removed. */
export function liveHolders(db: string): LedgerHolder[] {
  const prefix = holderPrefix(db);
  let names: string[];
  try {
    names = readdirSync(dirname(prefix));
  } catch {
    return [];
  }
  const live: LedgerHolder[] = [];
  for (const name of names) {
    const file = join(dirname(prefix), name);
    if (!file.startsWith(prefix) || !/^\d+$/.test(file.slice(prefix.length))) continue;
    let holder: LedgerHolder;
    try {
      holder = JSON.parse(readFileSync(file, "utf8")) as LedgerHolder;
    } catch {
      continue; // removed meanwhile, or half written by a process starting now: it will say so.
    }
    if (holder.pid === process.pid && holder.host === hostname()) continue;
    if (isAlive(holder)) live.push(holder);
    else rmSync(file, { force: true });
  }
  return live;
}

/**
 * Throws a `conflict` when a process has `db` open: `what` (restore) would replace the file
 * under it, and whatever it wrote afterwards would be lost. The message names each process and
 * how to stop it.
 */
export function refuseWhileHeld(db: string, what: string): void {
  const holders = liveHolders(db);
  if (holders.length === 0) return;
  const named = holders.map(
    (h) =>
      `pid ${h.pid}${h.host !== hostname() ? ` on ${h.host}` : ""} (finality ${h.command || "(library)"}, since ${h.startedAt})`,
  );
  const stop =
    holders.length === 1 && holders[0]?.host === hostname()
      ? `stop it first (kill -TERM ${holders[0].pid}, or stop its service, e.g. systemctl stop finality)`
      : "stop them first (kill -TERM <pid> on their host, or stop their service)";
  throw new FinalityError(
    "conflict",
    `${what}: ${db} is open in ${named.join(", ")}; ${stop}, then run ${what} again`,
    { details: { field: "store.sqlite", pids: holders.map((h) => h.pid) } },
  );
}
