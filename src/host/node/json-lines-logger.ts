import { type Logger as PinoLogger, pino } from "pino";
import type { Logger } from "../../http/request-log.js";

const LEVELS = { info: 30, warn: 40, error: 50 } as const;
/** Keys whose JSON is kept (a caller's own field names are few; this bounds an odd one's). */
const MAX_KEYS = 256;

/**
 * The app's Logger over the pino logger `serve` makes (no serializers, formatters, mixin or hooks
 * of its own). A line whose fields are all strings, numbers, booleans or null, as every request
 * line is, is written to pino's stream as the very line pino would write (its level and time
 * prefix, its pid and hostname, the fields in order, `msg`), but built with one native
 * `JSON.stringify` per string: pino's generic path escapes every key and string in JavaScript,
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
          out += keyOf(key) + JSON.stringify(value);
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
    if (message !== undefined) out += `,"msg":${JSON.stringify(message)}`;
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
