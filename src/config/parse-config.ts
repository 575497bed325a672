import type { z } from "zod";
import { didYouMean } from "../core/did-you-mean.js";
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
import { knownKeysAt } from "./known-keys.js";

/** The provider instance the service runs when the configuration names none. */
export const BUILT_IN_PROVIDER = "generic";

/** Command-line flags; they win over the environment, which wins over the file. */
export interface ConfigFlags {
  port?: number | undefined;
  host?: string | undefined;
  db?: string | undefined;
}

export interface ParseOptions {
  /**
   * False for commands that only read the ledger: `env:` references outside `store` are not
   * resolved (their variables need not be set, and no secret is read). The configuration
   * returned then holds placeholders there and must not be used to verify, poll or sign.
   */
  resolveSecrets?: boolean;
}

/** Validates a configuration object (already read) with the environment and flags applied. */
export function parseConfig(
  raw: unknown,
  env: Environment,
  flags: ConfigFlags = {},
  options: ParseOptions = {},
): FinalityConfig {
  if (!isObject(raw)) throw configError("(root)", "expected a JSON object");
  const sources: ValueSources = new Map();
  const config = applyEnvOverrides(raw, env, sources);
  applyFlags(config, flags, sources);
  const configuredProviders = isObject(config.providers) && Object.keys(config.providers).length > 0;
  addBuiltInProvider(config, env, sources);
  const resolved =
    options.resolveSecrets === false ? resolveStoreOnly(config, env) : resolveEnvReferences(config, env);
  const parsed = configSchema.safeParse(resolved);
  if (parsed.success) {
    if (!configuredProviders) builtIn.add(parsed.data);
    return parsed.data;
  }
  // A misspelt key also makes the right one missing (`secret` for `secrets`): the unknown key is the
  // cause, so it is the one reported, with the name it was probably meant to be.
  const issues = parsed.error.issues;
  throw fromIssue(
    narrowUnion(issues.find((i) => i.code === "unrecognized_keys") ?? issues[0]),
    sources,
    resolved,
  );
}

/**
 * A union's own message only lists its shapes (`{"sqlite": path} or {"postgres": url}`). When the
 * input uses one shape's keys (no unknown key at that shape's root), that shape's own first issue
 * says what is wrong: `store.synchronous` of a SQLite store, not "expected one of two shapes".
 */
function narrowUnion(issue: z.core.$ZodIssue | undefined): z.core.$ZodIssue | undefined {
  if (issue?.code !== "invalid_union") return issue;
  const branch = issue.errors.find(
    (errors) =>
      errors.length > 0 && !errors.some((e) => e.code === "unrecognized_keys" && e.path.length === 0),
  );
  const inner = branch?.[0];
  return inner ? narrowUnion({ ...inner, path: [...issue.path, ...inner.path] }) : issue;
}

/**
 * The store's references resolved (it is what a read opens), every other `env:NAME` replaced by
 * a placeholder that passes the schema wherever a secret or URL may stand (an https URL, longer
 * than any minimum length, neither `whsec_` nor `whpk_`).
 */
function resolveStoreOnly(config: Record<string, unknown>, env: Environment): unknown {
  const { store, ...rest } = config;
  const placeholders = replaceEnvReferences(rest);
  return store === undefined
    ? placeholders
    : { ...(placeholders as object), store: resolveEnvReferences(store, env, ["store"]) };
}

function replaceEnvReferences(value: unknown, scheme = "https"): unknown {
  if (typeof value === "string" && value.startsWith("env:"))
    return `${scheme}://env-not-read.invalid/${encodeURIComponent(value.slice(4))}`;
  if (Array.isArray(value)) return value.map((item) => replaceEnvReferences(item, scheme));
  if (isObject(value))
    return Object.fromEntries(
      // A broker destination's URLs must keep their scheme (nats://, amqp://, redis://) to pass.
      Object.entries(value).map(([key, item]) => [
        key,
        replaceEnvReferences(item, BROKER_SCHEMES[key] ?? scheme),
      ]),
    );
  return value;
}

const BROKER_SCHEMES: Record<string, string> = { nats: "nats", amqp: "amqp", redis: "redis" };

const builtIn = new WeakSet<FinalityConfig>();

/** True when the configuration named no providers and runs the built-in `generic` one. */
export function usesBuiltInProvider(config: FinalityConfig): boolean {
  return builtIn.has(config);
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

function fromIssue(
  issue: z.core.$ZodIssue | undefined,
  sources: ValueSources,
  input: unknown,
): FinalityError {
  if (issue === undefined) return configError("(root)", "invalid");
  let path = [...issue.path];
  let message = issue.message.replace(/^Invalid input: /, "");
  if (issue.code === "unrecognized_keys") {
    const key = issue.keys[0] ?? "";
    path = [...path, key];
    // Every object of the configuration is strict; the schema itself lists the right names.
    message = `unknown field${didYouMean(key, knownKeysAt(configSchema, issue.path, input))}`;
  } else if (issue.code === "invalid_key") {
    message = `invalid name: ${issue.issues[0]?.message ?? message}`;
  }
  const field = formatPath(path);
  const source = sourceOf(field, sources);
  if (source !== undefined && sources.get(field) === source) {
    // A variable or flag set this very field: name it first. Its value is always text, so
    // zod's "received string" says nothing; the value does (numbers only: never a secret).
    if (issue.code === "invalid_type" && issue.expected === "number")
      message = `expected a number, got ${JSON.stringify(valueAt(input, path))}`;
    return configError(`${source} (${field})`, message, field);
  }
  return configError(source ? `${field} (from ${source})` : field, message, field);
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) value = isObject(value) ? value[key as string] : undefined;
  return value;
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
