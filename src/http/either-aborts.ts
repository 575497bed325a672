/** A controller aborted when any of `signals` is (or by its own `abort()`). */
export function eitherAborts(...signals: (AbortSignal | undefined)[]): AbortController {
  const controller = new AbortController();
  for (const signal of signals) {
    if (signal?.aborted) controller.abort();
    else
      signal?.addEventListener("abort", () => controller.abort(), { once: true, signal: controller.signal });
  }
  return controller;
}
