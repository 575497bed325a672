const encoder = new TextEncoder();

/**
 * Compares two secrets in time that depends only on the length of `expected`, so that a caller
 * cannot find a token byte by byte by timing answers. Plain JavaScript (no node:crypto) so that
 * the app runs unchanged off Node.
 */
export function constantTimeEqual(given: string, expected: string): boolean {
  const a = encoder.encode(given);
  const b = encoder.encode(expected);
  let difference = a.length ^ b.length;
  for (let i = 0; i < b.length; i++) difference |= (a[i % Math.max(a.length, 1)] ?? 0) ^ (b[i] ?? 0);
  return difference === 0;
}
