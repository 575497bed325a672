import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** Exits with a message when strace is missing. */
export function requireStrace() {
  if (spawnSync("strace", ["-V"]).error) {
    console.error("strace is not installed (apt-get install strace)");
    process.exit(1);
  }
}

/**
 * Attaches `strace -c -f` to every thread of `pid` (resolves once they are); `detach()`
 * stops it and resolves with the system calls it counted, by name. The kernel's side of a
 * window, which callgrind does not count: a count, so the machine's load does not move it.
 */
export async function attachStrace(pid, dir) {
  const out = join(dir, "strace.txt");
  const tracer = spawn("strace", ["-c", "-f", "-o", out, "-p", String(pid)], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let log = "";
  await new Promise((resolve, reject) => {
    tracer.on("error", reject);
    tracer.on("exit", (code) => reject(new Error(`strace exited (${code}) before attaching: ${log}`)));
    tracer.stderr.on("data", (data) => {
      log += data.toString();
      // "Process N attached with T threads": one line, once every thread is.
      if (/attached/.test(log)) resolve();
    });
  });
  tracer.removeAllListeners("exit");
  return {
    async detach() {
      const exited = new Promise((resolve) => tracer.on("exit", resolve));
      tracer.kill("SIGINT");
      await exited;
      return syscallsIn(readFileSync(out, "utf8"));
    },
  };
}

/** `strace -c`'s table as calls by system call name (its `total` line left out). */
function syscallsIn(table) {
  const calls = {};
  for (const line of table.split("\n")) {
    const row = /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$/.exec(line);
    if (row && row[2] !== "total") calls[row[2]] = Number(row[1]);
  }
  return calls;
}
