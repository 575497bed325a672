/**
 * `load` on the first call, and the same promise for every call after it: concurrent first callers
 * share one load instead of racing. A load that fails is not kept, so the next call tries again.
 * For the modules `finality serve` imports on first use (`await import(...)`) rather than at start:
 * a library that a configuration never reaches then costs no memory (issue 29).
 */
export function loadOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };
}
