/**
 * One error type for everything Finality refuses or fails at, with a stable `code` and a hint of
 * what the caller should do next: `retryable` (try again, maybe after `retryAfterMs`) or not.
 * What a code means over HTTP (its status) is http/'s business: http/problem-status.ts.
 */
export const ERROR_CODES = {
  "invalid-observation": { retryable: false },
  "invalid-request": { retryable: false },
  "payload-too-large": { retryable: false },
  "unknown-provider": { retryable: false },
  "not-found": { retryable: false },
  "signature-invalid": { retryable: false },
  unauthorized: { retryable: false },
  forbidden: { retryable: false },
  "method-not-allowed": { retryable: false },
  conflict: { retryable: false },
  "stale-generation": { retryable: false },
  "version-conflict": { retryable: true },
  "invalid-config": { retryable: false },
  "effect-failed": { retryable: true },
  "store-unavailable": { retryable: true },
  "shutting-down": { retryable: true },
  overloaded: { retryable: true },
  "wait-timeout": { retryable: true },
  internal: { retryable: true },
} as const;
export type ErrorCode = keyof typeof ERROR_CODES;

export class FinalityError extends Error {
  override readonly name = "FinalityError";
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  /** Ids and values that help a caller act on the error (field name, job key, ...). */
  readonly details: Readonly<Record<string, unknown>>;

  constructor(
    code: ErrorCode,
    message: string,
    options: { details?: Record<string, unknown>; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retryable = ERROR_CODES[code].retryable;
    this.retryAfterMs = options.retryAfterMs;
    this.details = options.details ?? {};
  }
}

export function isFinalityError(value: unknown, code?: ErrorCode): value is FinalityError {
  return value instanceof FinalityError && (code === undefined || value.code === code);
}

/** Turns any thrown value into an Error, so that callers handle one shape. */
export function toError(value: unknown): Error {
  if (value instanceof Error) return value;
  return new Error(typeof value === "string" ? value : `non-error thrown: ${safeString(value)}`);
}

function safeString(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

export function assertNever(value: never, what = "value"): never {
  throw new Error(`unexpected ${what}: ${String(value)}`);
}
