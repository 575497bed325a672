import { readFileSync } from "node:fs";
import { toError } from "../core/errors.js";
import type { FinalityConfig } from "./config-schema.js";
import type { Environment } from "./env-overrides.js";
import { type ConfigFlags, configError, parseConfig } from "./parse-config.js";

export { BUILT_IN_PROVIDER, type ConfigFlags, type ParseOptions, parseConfig } from "./parse-config.js";

interface LoadConfigOptions {
  /** Path of the JSON file; defaults to FINALITY_CONFIG; no file at all is fine. */
  file?: string | undefined;
  env: Environment;
  flags?: ConfigFlags;
  readFile?: (path: string) => string;
  /** False for commands that only read: see ParseOptions. */
  resolveSecrets?: boolean;
}

/** Reads, overrides and validates the configuration; throws one `invalid-config` error naming the field. */
export function loadConfig(options: LoadConfigOptions): FinalityConfig {
  const file = options.file ?? (options.env.FINALITY_CONFIG || undefined);
  const raw = file === undefined ? {} : readConfigFile(file, options.readFile ?? readUtf8);
  return parseConfig(raw, options.env, options.flags, { resolveSecrets: options.resolveSecrets ?? true });
}

function readConfigFile(file: string, read: (path: string) => string): unknown {
  let text: string;
  try {
    text = read(file);
  } catch (error) {
    throw configError(file, `cannot read the file: ${toError(error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw configError(file, `invalid JSON: ${toError(error).message}`);
  }
}

function readUtf8(path: string): string {
  return readFileSync(path, "utf8");
}
