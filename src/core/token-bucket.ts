/** A token bucket for provider rate limits. Pure: the caller keeps the state and the time. */
export interface TokenBucket {
  tokens: number;
  updatedAt: number;
}

export interface RateLimit {
  perSecond: number;
  burst: number;
}

export function fullBucket(limit: RateLimit, now: number): TokenBucket {
  return { tokens: limit.burst, updatedAt: now };
}

/** Tokens in the bucket at `now`, refilled since it was last touched (never above `burst`). */
export function availableTokens(bucket: TokenBucket, limit: RateLimit, now: number): number {
  const elapsedSeconds = Math.max(0, now - bucket.updatedAt) / 1000;
  return Math.min(limit.burst, bucket.tokens + elapsedSeconds * limit.perSecond);
}

/** Takes one token if there is one; otherwise says how long until there will be. */
export function takeToken(
  bucket: TokenBucket,
  limit: RateLimit,
  now: number,
): { taken: true; bucket: TokenBucket } | { taken: false; bucket: TokenBucket; waitMs: number } {
  const tokens = availableTokens(bucket, limit, now);
  if (tokens >= 1) return { taken: true, bucket: { tokens: tokens - 1, updatedAt: now } };
  return {
    taken: false,
    bucket: { tokens, updatedAt: now },
    waitMs: Math.ceil(((1 - tokens) / limit.perSecond) * 1000),
  };
}
