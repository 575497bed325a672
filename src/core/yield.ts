/**
 * Resolves after pending I/O callbacks have run: `setImmediate` where the runtime has it (Node,
 * where a zero timer waits at least 1 ms), a zero timer elsewhere (Workers).
 */
export function yieldToEventLoop(): Promise<void> {
  const immediate = (globalThis as { setImmediate?: (callback: () => void) => unknown }).setImmediate;
  return new Promise((resolve) => (immediate ? immediate(resolve) : setTimeout(resolve, 0)));
}
