import type { PrettyLog } from "../host/node/serve.js";
import { isInteractive, type Style, styleFor } from "./cli-output.js";

/** What the Node host logs to: readable lines on a terminal (for `log.format` "auto"), as `serve` asks. */
export function cliPrettyLog(): PrettyLog {
  return { interactive: isInteractive(process.stdout), stream: () => prettyLogStream() };
}

/**
 * Readable log lines for a person at a terminal, in place of pino's JSON: what pino-pretty would
 * print, without its dozen dependencies in every install.
 * `09:48:12.345 INFO  listening url=http://127.0.0.1:8787 providers=["generic"]`
 * Used only when stdout is a terminal (see host/node/serve.ts); a pipe or a file gets the JSON lines.
 */
function prettyLogStream(out: { write(text: string): unknown } = process.stdout, style: Style = styleFor()) {
  return {
    write(line: string): void {
      out.write(`${prettyLine(line, style)}\n`);
    },
  };
}

const LEVELS: Record<number, string> = {
  10: "TRACE",
  20: "DEBUG",
  30: "INFO",
  40: "WARN",
  50: "ERROR",
  60: "FATAL",
};
/** What every line carries and the line's head already says. */
const HEAD_FIELDS = new Set(["level", "time", "msg", "pid", "hostname"]);

function prettyLine(line: string, style: Style): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line.trimEnd();
  }
  const level = typeof record.level === "number" ? record.level : 30;
  const name = (LEVELS[level] ?? String(level)).padEnd(5);
  const paint = level >= 50 ? style.red : level >= 40 ? style.yellow : level >= 30 ? style.green : style.dim;
  const time = typeof record.time === "number" ? new Date(record.time).toISOString().slice(11, 23) : "";
  const fields = Object.entries(record)
    .filter(([key, value]) => !HEAD_FIELDS.has(key) && value !== undefined)
    .map(
      ([key, value]) => `${style.dim(`${key}=`)}${typeof value === "string" ? value : JSON.stringify(value)}`,
    );
  return [style.dim(time), paint(name), record.msg ?? "", ...fields].filter((part) => part !== "").join(" ");
}
