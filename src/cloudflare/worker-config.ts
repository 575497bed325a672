import type { FinalityConfig } from "../config/config-schema.js";
import { configError, parseConfig } from "../config/parse-config.js";

/**
 * The configuration of a Worker: the same JSON as `finality serve` reads from its file, given as
 * the `FINALITY_CONFIG` binding (a [vars] JSON object or string), with the same environment
 * overrides and `"env:NAME"` references resolved against the Worker's string bindings (secrets
 * and vars). `store`, `server.host` and `server.port` mean nothing here: the ledger is the
 * Durable Object's own SQLite database.
 */
export function configFromBindings(env: Readonly<Record<string, unknown>>): FinalityConfig {
  const strings: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (typeof value === "string") strings[name] = value;
  const raw = env.FINALITY_CONFIG;
  let parsed: unknown = {};
  if (typeof raw === "string" && raw.trim() !== "") {
    try {
      parsed = JSON.parse(raw);
    } catch (error) {
      throw configError("FINALITY_CONFIG", `invalid JSON: ${(error as Error).message}`);
    }
  } else if (raw !== undefined && typeof raw === "object") {
    parsed = raw;
  }
  // FINALITY_CONFIG is the configuration itself here, not a file path to read.
  delete strings.FINALITY_CONFIG;
  return parseConfig(parsed, strings);
}
