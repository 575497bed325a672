import { createWorker, type Worker } from "../worker/worker-client.js";

interface DemoWorkers {
  /** Runs enqueued so far. */
  readonly enqueued: number;
  stop(): Promise<void>;
}

/**
 * Runs on your own workers, for the demo's Runs page: a run is enqueued every few seconds; two
 * workers take them. `renderer-1` is steady. `renderer-2` crashes every 45 s (it stops
 * heartbeating without reporting, as a killed process would) and comes back 10 s later: its
 * leases run out, the sweeper marks those attempts lost, and the runs go to another attempt
 * with a higher generation.
 */
export function startDemoWorkers(serviceUrl: string, random: () => number = Math.random): DemoWorkers {
  let enqueued = 0;
  const sleep = (ms: number, signal?: AbortSignal) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, ms);
      signal?.addEventListener("abort", () => {
        clearTimeout(timer);
        reject(signal.reason);
      });
    });
  const worker = (workerId: string): Worker =>
    createWorker({
      baseUrl: serviceUrl,
      workerId,
      kinds: ["render"],
      leaseSeconds: 6,
      concurrency: 2,
      waitSeconds: 2,
      onStop: "abandon",
      handler: async (run, { signal, progress }) => {
        await sleep(1000 + random() * 3000, signal);
        await progress({ frames: 50 });
        await sleep(1000 + random() * 4000, signal);
        if (random() < 0.1) throw new Error("encoder crashed");
        return { frames: 100, input: run.input };
      },
    });
  const steady = worker("renderer-1");
  const crashing = worker("renderer-2");
  steady.start();
  crashing.start();

  const enqueue = setInterval(() => {
    enqueued++;
    void fetch(`${serviceUrl}/v1/runs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ kind: "render", input: { scene: enqueued } }),
    })
      .then((response) => response.arrayBuffer())
      .catch(() => {});
  }, 3000);
  let restart: ReturnType<typeof setTimeout> | null = null;
  const crash = setInterval(() => {
    void crashing.stop();
    restart = setTimeout(() => crashing.start(), 10_000);
  }, 45_000);

  return {
    get enqueued() {
      return enqueued;
    },
    async stop() {
      clearInterval(enqueue);
      clearInterval(crash);
      if (restart) clearTimeout(restart);
      await Promise.all([steady.stop(), crashing.stop()]);
    },
  };
}
