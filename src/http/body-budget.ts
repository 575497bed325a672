import { FinalityError } from "../core/errors.js";

/**
 * The bytes of request bodies being read at once, across every connection (`server.bodyBytesInFlight`).
 * The per-request limit bounds one body; this bounds them all together, so that many slow senders
 * cannot hold memory without bound. A body is reserved as it is read (its declared length up front
 * when it has one) and released once its request is answered.
 */
export interface BodyBudget {
  /** Takes `bytes` from the budget; throws `overloaded` (503, retry after 1 s) when they do not fit. */
  take(bytes: number): void;
  /** Gives back what `take` took. */
  give(bytes: number): void;
  /** Bytes taken now. */
  inFlight(): number;
}

export function createBodyBudget(limitBytes: number): BodyBudget {
  let taken = 0;
  return {
    take(bytes) {
      if (taken + bytes > limitBytes)
        throw new FinalityError(
          "overloaded",
          `too many request bodies are being read at once (server.bodyBytesInFlight, ${limitBytes} bytes)`,
          { details: { limitBytes }, retryAfterMs: 1000 },
        );
      taken += bytes;
    },
    give(bytes) {
      taken -= bytes;
    },
    inFlight: () => taken,
  };
}
