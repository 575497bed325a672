import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { BENCH_SECRET } from "./presign.js";
import { startServer } from "./processes.js";

/** This build's CLI; a baseline passes another build's `cli/main.js`. */
export const CLI = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));

/** An integer knob from the environment, or its default. */
export const intKnob = (value, fallback) => (value ? Number.parseInt(value, 10) : fallback);

/**
 * `finality serve` on SQLite in `dir` with the one generic provider `acme` the presigned webhooks
 * are signed for, plus `extra` configuration (effects, telemetry), on a free port; `nodeFlags` go
 * to node before the CLI (`--max-semi-space-size=8`, say).
 */
export function startFinalityServe(dir, { extra = {}, sync, logLevel, cli = CLI, nodeFlags = [] }) {
  const config = join(dir, "finality.config.json");
  writeFileSync(
    config,
    JSON.stringify({
      providers: { acme: { type: "generic", webhook: { secrets: [BENCH_SECRET] } } },
      ...extra,
    }),
  );
  return startServer(
    process.execPath,
    [...nodeFlags, cli, "serve", "--config", config, "--port", "0", "--db", join(dir, "f.db")],
    {
      FINALITY_SQLITE_SYNCHRONOUS: sync,
      FINALITY_LOG_LEVEL: logLevel,
    },
  );
}
