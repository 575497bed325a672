/**
 * Makes every fetch in this process refuse any host but 127.0.0.1 while a test file runs: the
 * official SDKs are pointed at the fakes, and a forgotten base URL must fail the test rather than
 * reach a real provider.
 */
export function loopbackOnly(): () => void {
  const original = globalThis.fetch;
  globalThis.fetch = (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.hostname !== "127.0.0.1")
      return Promise.reject(new Error(`test refused a request to ${url.origin}`));
    return original(input, init);
  };
  return () => {
    globalThis.fetch = original;
  };
}
