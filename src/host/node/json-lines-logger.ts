import { type Logger as PinoLogger, pino } from "pino";
import type { Logger } from "../../http/request-log.js";

const LEVELS = { info: 30, warn: 40, error: 50 } as const;
/** Keys whose JSON is kept (a caller's own field names are few; this bounds an odd one's). */
const MAX_KEYS = 256;
/**
 * Short string values whose JSON is kept: the first this many seen, but for identifiers (a key
 * `id` or ending in `Id`: job, delivery and request ids), which are new on every line and would
 * fill the table. A request line's method, route, path, provider, outcome and message repeat. A
 * lookup is a builtin's hash probe; `JSON.stringify` a call into V8's runtime, ~1,000
 * instructions each (8 a line).
 */
const MAX_VALUES = 512;
const MAX_VALUE_LENGTH = 64;

/**
 * The app's Logger over the pino logger `serve` makes (no serializers, formatters, mixin or hooks
 * of its own). A line whose fields are all strings, numbers, booleans or null, as every request
 * line is, is written to pino's stream as the very line pino would write (its level and time
 * prefix, its pid and hostname, the fields in order, `msg`), but built with one native
 * `JSON.stringify` per string (kept for short ones that repeat): pino's generic path escapes every key and string in JavaScript,
 * about 10% of a webhook's instructions (issue 29). Any other line (an error, an object) is
 * pino's own.
 */
export function jsonLinesLogger(logger: PinoLogger): Logger {
  // `,"key":` made once per key: a request line has a dozen keys, always the same ones.
  const keys = new Map<string, string>();
  const keyOf = (key: string): string => {
    let made = keys.get(key);
    if (made === undefined) {
      made = `,${JSON.stringify(key)}:`;
      if (keys.size < MAX_KEYS) keys.set(key, made);
    }
    return made;
  };
  const values = new Map<string, string>();
  const quoted = (value: string): string => {
    let made = values.get(value);
    if (made === undefined) {
      made = JSON.stringify(value);
      if (value.length <= MAX_VALUE_LENGTH && values.size < MAX_VALUES) values.set(value, made);
    }
    return made;
  };
  const isIdentifier = (key: string) => key === "id" || key.endsWith("Id");
  const s = pino.symbols;
  const self = logger as unknown as Record<symbol, unknown>;
  const prefixes = self[s.lsCacheSym] as Record<number, string>;
  const time = self[s.timeSym] as () => string;
  const chindings = self[s.chindingsSym] as string;
  const end = self[s.endSym] as string;
  const stream = self[s.streamSym] as { write(line: string): unknown };

  function line(level: 30 | 40 | 50, fields: object, message: string | undefined): string | null {
    let out = prefixes[level] + time() + chindings;
    for (const key in fields) {
      if (!Object.hasOwn(fields, key)) continue;
      const value = (fields as Record<string, unknown>)[key];
      switch (typeof value) {
        case "string":
          out += keyOf(key) + (isIdentifier(key) ? JSON.stringify(value) : quoted(value));
          break;
        case "number":
          out += keyOf(key) + (Number.isFinite(value) ? value : "null");
          break;
        case "boolean":
          out += keyOf(key) + value;
          break;
        case "undefined":
          break;
        default:
          if (value !== null) return null;
          out += `${keyOf(key)}null`;
      }
    }
    if (message !== undefined) out += `,"msg":${quoted(message)}`;
    return out + end;
  }

  function write(name: keyof typeof LEVELS, fields: object, message: string | undefined): void {
    const level = LEVELS[name];
    if (logger.levelVal > level) return;
    const text = line(level, fields, message);
    if (text === null) logger[name](fields, message);
    else stream.write(text);
  }

  return {
    info: (fields, message) => write("info", fields, message),
    warn: (fields, message) => write("warn", fields, message),
    error: (fields, message) => write("error", fields, message),
  };
}
