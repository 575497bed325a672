import { FinalityError } from "../core/errors.js";
import { POSTGRES_STORE_SETTINGS, SQLITE_STORE_SETTINGS } from "./config-schema.js";

export type Environment = Readonly<Record<string, string | undefined>>;
type Json = Record<string, unknown>;

/** Where a value came from, by dotted field path, so that an error can name the variable. */
export type ValueSources = Map<string, string>;

/**
 * Environment variables that override one field of the file. Applied to the raw object before
 * validation, so that a bad value is reported like any other (naming the field and the variable).
 * FINALITY_DB wins over DATABASE_URL: DATABASE_URL is often set for some other program.
 */
const OVERRIDES: readonly {
  variable: string;
  /** `file` is the configuration as read, before any variable: what a store override keeps. */
  apply: (config: Json, value: string, file: Json) => string | null;
}[] = [
  { variable: "FINALITY_HOST", apply: (c, v) => set(c, ["server", "host"], v) },
  { variable: "FINALITY_PORT", apply: (c, v) => set(c, ["server", "port"], numeric(v)) },
  {
    variable: "FINALITY_BODY_LIMIT_BYTES",
    apply: (c, v) => set(c, ["server", "bodyLimitBytes"], numeric(v)),
  },
  {
    variable: "FINALITY_BODY_BYTES_IN_FLIGHT",
    apply: (c, v) => set(c, ["server", "bodyBytesInFlight"], numeric(v)),
  },
  {
    variable: "FINALITY_KEEP_ALIVE_TIMEOUT_MS",
    apply: (c, v) => set(c, ["server", "keepAliveTimeoutMs"], numeric(v)),
  },
  {
    variable: "FINALITY_HEADERS_TIMEOUT_MS",
    apply: (c, v) => set(c, ["server", "headersTimeoutMs"], numeric(v)),
  },
  { variable: "FINALITY_API_TOKEN", apply: (c, v) => set(c, ["server", "apiToken"], v) },
  { variable: "FINALITY_LOG_LEVEL", apply: (c, v) => set(c, ["log", "level"], v) },
  {
    variable: "FINALITY_MAX_CLOCK_SKEW_SECONDS",
    apply: (c, v) => set(c, ["ingest", "maxClockSkewSeconds"], numeric(v)),
  },
  {
    variable: "DATABASE_URL",
    apply: (c, v, file) => {
      // The URL changes per deployment; the schema the file names for Finality's tables, and the
      // pool's size and timeouts, stay.
      const store = objectAt(file, "store");
      const kept = POSTGRES_STORE_SETTINGS.filter((key) => key in store).map((key) => [key, store[key]]);
      c.store = { postgres: v, ...Object.fromEntries(kept) };
      return "store.postgres";
    },
  },
  {
    variable: "FINALITY_DB",
    apply: (c, v, file) => {
      const store = objectAt(file, "store");
      // The file's SQLite settings stay with the new path.
      const kept = SQLITE_STORE_SETTINGS.filter((key) => key in store).map((key) => [key, store[key]]);
      c.store = { sqlite: v, ...Object.fromEntries(kept) };
      return "store.sqlite";
    },
  },
  {
    variable: "FINALITY_SQLITE_SYNCHRONOUS",
    apply: (c, v) => {
      const store = objectAt(c, "store");
      // Meaningless for PostgreSQL: ignored there rather than reported as a conflict.
      if ("postgres" in store) return null;
      c.store = { sqlite: "./finality.db", ...store, synchronous: v.toUpperCase() };
      return "store.synchronous";
    },
  },
  // OpenTelemetry's own variables (the SDK's specification): the generic endpoint gets the
  // traces path appended, the traces endpoint is used as it is and wins.
  {
    variable: "OTEL_EXPORTER_OTLP_ENDPOINT",
    apply: (c, v) => set(c, ["telemetry", "otlpUrl"], `${v.replace(/\/+$/, "")}/v1/traces`),
  },
  { variable: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", apply: (c, v) => set(c, ["telemetry", "otlpUrl"], v) },
  { variable: "OTEL_SERVICE_NAME", apply: (c, v) => set(c, ["telemetry", "serviceName"], v) },
  { variable: "OTEL_TRACES_SAMPLER_ARG", apply: (c, v) => set(c, ["telemetry", "sampleRatio"], numeric(v)) },
  {
    variable: "OTEL_SDK_DISABLED",
    apply: (c, v) => {
      if (v.trim().toLowerCase() !== "true") return null;
      const { otlpUrl: _dropped, ...rest } = objectAt(c, "telemetry");
      c.telemetry = rest;
      return "telemetry.otlpUrl";
    },
  },
];

/** The environment variables the service reads, for documentation and `--help`. */
export const ENV_VARIABLES = [
  "FINALITY_CONFIG",
  ...OVERRIDES.map((o) => o.variable),
  "FINALITY_WEBHOOK_SECRET",
] as const;

/** Returns a copy of `raw` with the environment applied; records each field it set in `sources`. */
export function applyEnvOverrides(raw: Json, env: Environment, sources: ValueSources): Json {
  const config = structuredClone(raw);
  for (const override of OVERRIDES) {
    const value = env[override.variable];
    if (value === undefined || value === "") continue;
    const field = override.apply(config, value, raw);
    if (field !== null) sources.set(field, override.variable);
  }
  return config;
}

/**
 * Replaces every string `"env:NAME"` with the value of the variable NAME. A variable that is
 * not set is a config error naming the field, not a silent empty secret.
 */
export function resolveEnvReferences(
  value: unknown,
  env: Environment,
  path: (string | number)[] = [],
): unknown {
  if (typeof value === "string" && value.startsWith("env:")) {
    const name = value.slice(4);
    const resolved = env[name];
    if (resolved === undefined || resolved === "") {
      throw new FinalityError(
        "invalid-config",
        `config error: ${formatPath(path)}: environment variable ${name} is not set`,
        { details: { field: formatPath(path), variable: name } },
      );
    }
    return resolved;
  }
  if (Array.isArray(value))
    return value.map((item, index) => resolveEnvReferences(item, env, [...path, index]));
  if (isObject(value)) {
    const out: Json = {};
    for (const [key, item] of Object.entries(value))
      out[key] = resolveEnvReferences(item, env, [...path, key]);
    return out;
  }
  return value;
}

export function formatPath(path: readonly PropertyKey[]): string {
  return path.length === 0 ? "(root)" : path.map(String).join(".");
}

export function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function objectAt(config: Json, key: string): Json {
  const value = config[key];
  return isObject(value) ? value : {};
}

function set(config: Json, path: [string, string], value: unknown): string {
  config[path[0]] = { ...objectAt(config, path[0]), [path[1]]: value };
  return path.join(".");
}

/** Numbers from the environment; anything else stays a string so that validation names it. */
function numeric(value: string): number | string {
  return /^-?[0-9]+(\.[0-9]+)?$/.test(value.trim()) ? Number(value) : value;
}
