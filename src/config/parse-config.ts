import type { z } from "zod";
import { FinalityError } from "../core/errors.js";
import { configSchema, type FinalityConfig } from "./config-schema.js";
import {
  applyEnvOverrides,
  type Environment,
  formatPath,
  isObject,
  resolveEnvReferences,
  type ValueSources,
} from "./env-overrides.js";

/** The provider instance the service runs when the configuration names none. */
export const BUILT_IN_PROVIDER = "generic";

/** Command-line flags; they win over the environment, which wins over the file. */
export interface ConfigFlags {
  port?: number | undefined;
  host?: string | undefined;
  db?: string | undefined;
}

/** Validates a configuration object (already read) with the environment and flags applied. */
export function parseConfig(raw: unknown, env: Environment, flags: ConfigFlags = {}): FinalityConfig {
  if (!isObject(raw)) throw configError("(root)", "expected a JSON object");
  const sources: ValueSources = new Map();
  const config = applyEnvOverrides(raw, env, sources);
  applyFlags(config, flags, sources);
  addBuiltInProvider(config, env, sources);
  const resolved = resolveEnvReferences(config, env);
  const parsed = configSchema.safeParse(resolved);
  if (parsed.success) return parsed.data;
  throw fromIssue(parsed.error.issues[0], sources);
}

/**
 * With no providers configured the service still takes webhooks: one `generic` instance, signed
 * with FINALITY_WEBHOOK_SECRET (without it, every webhook is refused as unsigned).
 */
function addBuiltInProvider(config: Record<string, unknown>, env: Environment, sources: ValueSources): void {
  const providers = config.providers;
  if (isObject(providers) && Object.keys(providers).length > 0) return;
  if (providers !== undefined && !isObject(providers)) return; // reported by validation
  const secret = env.FINALITY_WEBHOOK_SECRET;
  config.providers = {
    [BUILT_IN_PROVIDER]: { type: "generic", ...(secret ? { webhook: { secrets: [secret] } } : {}) },
  };
  if (secret) sources.set(`providers.${BUILT_IN_PROVIDER}.webhook.secrets.0`, "FINALITY_WEBHOOK_SECRET");
}

function applyFlags(config: Record<string, unknown>, flags: ConfigFlags, sources: ValueSources): void {
  const server = isObject(config.server) ? { ...config.server } : {};
  if (flags.port !== undefined) {
    server.port = flags.port;
    sources.set("server.port", "--port");
  }
  if (flags.host !== undefined) {
    server.host = flags.host;
    sources.set("server.host", "--host");
  }
  if (flags.port !== undefined || flags.host !== undefined) config.server = server;
  if (flags.db !== undefined) {
    const store = isObject(config.store) && "sqlite" in config.store ? config.store : {};
    config.store = { ...store, sqlite: flags.db };
    sources.set("store.sqlite", "--db");
  }
}

function fromIssue(issue: z.core.$ZodIssue | undefined, sources: ValueSources): FinalityError {
  if (issue === undefined) return configError("(root)", "invalid");
  let path = [...issue.path];
  let message = issue.message.replace(/^Invalid input: /, "");
  if (issue.code === "unrecognized_keys") {
    path = [...path, issue.keys[0] ?? ""];
    message = "unknown field";
  } else if (issue.code === "invalid_key") {
    message = `invalid name: ${issue.issues[0]?.message ?? message}`;
  }
  const field = formatPath(path);
  const source = sourceOf(field, sources);
  return configError(source ? `${field} (from ${source})` : field, message, field);
}

/** The variable or flag that set `field` or one of its parents. */
function sourceOf(field: string, sources: ValueSources): string | undefined {
  for (const [path, source] of sources) {
    if (field === path || field.startsWith(`${path}.`) || path.startsWith(`${field}.`)) return source;
  }
  return undefined;
}

export function configError(where: string, message: string, field = where): FinalityError {
  return new FinalityError("invalid-config", `config error: ${where}: ${message}`, { details: { field } });
}
