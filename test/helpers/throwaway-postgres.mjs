// A PostgreSQL cluster of its own, for tests and benchmarks that restart the server: the shared
// server at 127.0.0.1:5432 is used by other test files and must never be restarted. Plain
// JavaScript so that bench/ (which runs without a TypeScript step) can use it too.
import { execFileSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

function postgresBin() {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return null;
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  for (const version of versions) {
    const bin = join(root, version, "bin");
    if (existsSync(join(bin, "initdb"))) return bin;
  }
  return null;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Why a throwaway cluster cannot be made here, or null when it can. */
export function throwawayPostgresUnavailable() {
  if (postgresBin() === null) return "no PostgreSQL binaries under /usr/lib/postgresql";
  if (process.getuid?.() !== 0) return "not root: cannot run initdb as the postgres user";
  try {
    execFileSync("id", ["-u", "postgres"], { stdio: "pipe" });
  } catch {
    return "no postgres user";
  }
  return null;
}

/**
 * initdb into a temp dir owned by the postgres user, started on a free port on 127.0.0.1 with its
 * socket in that dir (fsync off: nothing here has to survive a power loss). `remove()` stops it
 * and deletes the dir.
 */
export async function startThrowawayPostgres() {
  const bin = postgresBin();
  const dir = mkdtempSync(join(tmpdir(), "finality-pgcluster-"));
  const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
  const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
  chownSync(dir, uid, gid);
  const data = join(dir, "data");
  const log = join(dir, "server.log");
  const port = await freePort();
  const asPostgres = (tool, args) =>
    execFileSync("runuser", ["-u", "postgres", "--", join(bin, tool), ...args], { stdio: "pipe", cwd: dir });
  asPostgres("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"]);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`;
  const pgCtl = (...args) => asPostgres("pg_ctl", ["-D", data, "-l", log, "-w", "-t", "30", ...args]);
  pgCtl("-o", options, "start");
  let removed = false;
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    /** A full restart: every backend ends, the port refuses connections for a while, then serves again. */
    restart() {
      pgCtl("-m", "fast", "restart");
    },
    stop() {
      pgCtl("-m", "fast", "stop");
    },
    start() {
      pgCtl("-o", options, "start");
    },
    log: () => (existsSync(log) ? readFileSync(log, "utf8") : ""),
    remove() {
      if (removed) return;
      removed = true;
      try {
        pgCtl("-m", "immediate", "stop");
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
