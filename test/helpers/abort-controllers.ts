/** Counts `new AbortController()` from here on (the global, as the lease uses it). */
export function countAbortControllers(): (() => number) & { restore(): void } {
  const Original = globalThis.AbortController;
  let count = 0;
  globalThis.AbortController = class extends Original {
    constructor() {
      super();
      count++;
    }
  };
  return Object.assign(() => count, {
    restore() {
      globalThis.AbortController = Original;
    },
  });
}
