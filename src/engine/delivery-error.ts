/** A failed effect delivery; `retryAfterMs` carries the receiver's Retry-After. */
export class DeliveryError extends Error {
  override readonly name = "DeliveryError";
  constructor(
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}
