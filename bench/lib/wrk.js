import { execFile, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const SCRIPT = fileURLToPath(new URL("../wrk/presigned.lua", import.meta.url));

export function hasWrk() {
  return spawnSync("wrk", ["--version"]).error === undefined;
}

/** Runs wrk with the pre-signed request file; resolves with the numbers its Lua `done` prints. */
export function runWrk({ url, path, file, seconds, connections, threads = 1 }) {
  const args = [
    `-t${threads}`,
    `-c${connections}`,
    `-d${seconds}s`,
    "--timeout",
    "10s",
    "-s",
    SCRIPT,
    url,
    "--",
    file,
    path,
    String(threads),
  ];
  return new Promise((resolve, reject) => {
    execFile("wrk", args, { maxBuffer: 1 << 20 }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`wrk failed: ${stderr || error.message}`));
      const line = stdout.split("\n").find((l) => l.startsWith("{"));
      if (!line) return reject(new Error(`wrk printed no result: ${stdout}`));
      const result = JSON.parse(line);
      resolve({ ...result, rate: result.requests / (result.durationUs / 1e6) });
    });
  });
}
