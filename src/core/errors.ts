/**
 * One error type for everything Finality refuses or fails at, with a stable `code` and a hint of
 * what the caller should do next: `retryable` (try again, maybe after `retryAfterMs`) or not.
 */
export const ERROR_CODES = {
  "invalid-observation": { status: 400, retryable: false },
  "invalid-request": { status: 400, retryable: false },
  "payload-too-large": { status: 413, retryable: false },
  "unknown-provider": { status: 404, retryable: false },
  "not-found": { status: 404, retryable: false },
  "signature-invalid": { status: 401, retryable: false },
  unauthorized: { status: 401, retryable: false },
  forbidden: { status: 403, retryable: false },
  "method-not-allowed": { status: 405, retryable: false },
  conflict: { status: 409, retryable: false },
  "stale-generation": { status: 409, retryable: false },
  "version-conflict": { status: 409, retryable: true },
  "invalid-config": { status: 500, retryable: false },
  "effect-failed": { status: 500, retryable: true },
  "store-unavailable": { status: 503, retryable: true },
  "shutting-down": { status: 503, retryable: true },
  internal: { status: 500, retryable: true },
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

  get status(): number {
    return ERROR_CODES[this.code].status;
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
