import type { Logger } from "../../http/request-log.js";

const RANK = { trace: 5, debug: 10, info: 20, warn: 30, error: 40, fatal: 50, silent: 100 } as const;

/**
 * Logs as one JSON object per line on the console: Workers Logs and `wrangler tail` index its
 * fields. Levels below `level` are dropped.
 */
export function consoleLogger(level: string): Logger {
  const threshold = RANK[level as keyof typeof RANK] ?? RANK.info;
  const line = (name: "info" | "warn" | "error", fields: object, message?: string) => {
    if (RANK[name] < threshold) return;
    const entry = JSON.stringify({ level: name, ...(message ? { msg: message } : {}), ...fields }, errors);
    if (name === "error") console.error(entry);
    else if (name === "warn") console.warn(entry);
    else console.log(entry);
  };
  return {
    info: (fields, message) => line("info", fields, message),
    warn: (fields, message) => line("warn", fields, message),
    error: (fields, message) => line("error", fields, message),
  };
}

function errors(_key: string, value: unknown): unknown {
  return value instanceof Error ? { name: value.name, message: value.message } : value;
}
