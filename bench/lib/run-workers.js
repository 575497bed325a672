import { createWorker } from "../../dist/worker/worker-client.js";

/**
 * `count` runs of kind `bench` taken by `workers` `finality/worker-client` workers (the queue
 * holds exactly that many), each end claiming the worker's next run; then the workers stop, which
 * resolves once the server has acknowledged every report (the workers' own transport, not a fetch
 * of the bench's). `onStart` is called just before they start: a bench starts its clocks there.
 * Resolves with the runs handled and the workers' errors.
 */
export async function drainWithWorkers(url, count, { workers, requestTimeoutMs, onStart = () => {} }) {
  let handled = 0;
  let finish;
  const allHandled = new Promise((resolve) => {
    finish = resolve;
  });
  const errors = [];
  const clients = Array.from({ length: workers }, (_, i) =>
    createWorker({
      baseUrl: url,
      workerId: `bench-${i}`,
      kinds: ["bench"],
      waitSeconds: 1,
      ...(requestTimeoutMs === undefined ? {} : { requestTimeoutMs }),
      onError: (error) => errors.push(error.message),
      handler: async (run) => {
        handled += 1;
        if (handled === count) finish();
        return { n: run.input.n };
      },
    }),
  );
  onStart();
  for (const client of clients) client.start();
  await allHandled;
  await Promise.all(clients.map((client) => client.stop()));
  return { handled, errors };
}
