import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/**
 * Spawns a server and resolves with its URL once it prints `listening on <url>`; the rest of its
 * output is drained and dropped (it still pays for writing it, as in production).
 */
export function startServer(command, args, env = {}) {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (data) => {
    stderr += data.toString();
  });
  return new Promise((resolve, reject) => {
    let seen = "";
    const onData = (data) => {
      seen += data.toString();
      const match = /listening on (\S+)/.exec(seen);
      if (match) {
        seen = "";
        child.stdout.off("data", onData);
        child.stdout.resume();
        resolve({ url: match[1], pid: child.pid, child, stop: () => stop(child) });
      } else if (seen.length > 65_536) seen = seen.slice(-1024);
    };
    child.stdout.on("data", onData);
    child.on("exit", (code) =>
      reject(new Error(`${args.join(" ")} exited ${code} before listening: ${stderr}`)),
    );
  });
}

function stop(child) {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    child.once("exit", (code, signal) => resolve(code ?? signal));
    child.kill("SIGTERM");
  });
}

/** Peak resident set size of a live process, in MiB (VmHWM). */
export function peakRssMiB(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const match = /VmHWM:\s+(\d+) kB/.exec(status);
  return match ? Math.round(Number(match[1]) / 1024) : Number.NaN;
}

/**
 * CPU time (user + system) every process named `name` on this machine has used so far, in
 * milliseconds: the local database's server processes (`postgres`), whichever session they serve.
 */
export function cpuMsOfAll(name) {
  let total = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() === name) total += cpuMs(Number(entry));
    } catch {
      // Gone between the listing and the read.
    }
  }
  return total;
}

/** CPU time (user + system) a live process has used so far, in milliseconds. */
export function cpuMs(pid) {
  const { userMs, systemMs } = cpuSplitMs(pid);
  return userMs + systemMs;
}

/** CPU time a live process has used so far, in milliseconds: its own code, and the kernel's for it. */
export function cpuSplitMs(pid) {
  // Fields 14 and 15 of /proc/<pid>/stat, in clock ticks (100 per second on Linux).
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return { userMs: Number(fields[11]) * 10, systemMs: Number(fields[12]) * 10 };
}
