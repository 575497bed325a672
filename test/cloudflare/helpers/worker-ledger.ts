import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";
import { requireWorkerd } from "../../helpers/services.js";
import { bundleWorker } from "./bundle.js";
import { outboundAnswer } from "./outbound-answer.js";

let bundled: Promise<string> | null = null;

/**
 * The deploy template's entry (deploy/workers/src/index.ts), with `finality/cloudflare` resolved to
 * this checkout's source, bundled once per test file as wrangler would.
 */
function workerScript(): Promise<string> {
  bundled ??= bundleWorker(new URL("../../../deploy/workers/src/index.ts", import.meta.url), {
    "finality/cloudflare": fileURLToPath(new URL("../../../src/cloudflare/index.ts", import.meta.url)),
  });
  return bundled;
}

/** The API token every test Worker gets unless told otherwise (a Worker refuses to run without one). */
export const TEST_API_TOKEN = "test-api-token-0123456789";

export interface WorkerLedger {
  /** A request to the Worker, as the internet would send it, with the API token unless it has an Authorization header. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** Runs the cron trigger once, as Cloudflare would; resolves when the run has finished. */
  scheduled(): Promise<void>;
  /** Every request the Worker sent out (status polls, effect deliveries). */
  readonly outbound: string[];
  /** What workerd wrote to stdout and stderr (uncaught exceptions land here), line by line. */
  readonly runtimeLog: string[];
  /** The Worker's own loopback address, for raw HTTP (a chunked body, a client that stops early). */
  readonly url: URL;
  dispose(): Promise<void>;
}

/**
 * The Finality Worker in workerd (Miniflare) with a Durable Object ledger. Its outbound fetches
 * (status polls, effect deliveries) are forwarded to this machine's loopback only; anything else
 * is refused, so a test can never reach the internet.
 */
export async function startWorkerLedger(
  config: Record<string, unknown>,
  bindings: Record<string, string> = {},
): Promise<WorkerLedger> {
  requireWorkerd();
  const outbound: string[] = [];
  const runtimeLog: string[] = [];
  const mf = new Miniflare({
    verbose: true,
    // The Worker on a socket of its own, without Miniflare's entry worker in front (which pipes
    // each request body on to the Worker itself), as Cloudflare's edge would hand it a request.
    unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }],
    handleRuntimeStdio(stdout, stderr) {
      for (const stream of [stdout, stderr])
        createInterface({ input: stream }).on("line", (line) => runtimeLog.push(line));
    },
    modules: true,
    script: await workerScript(),
    compatibilityDate: "2025-09-01",
    bindings: { FINALITY_CONFIG: JSON.stringify(config), FINALITY_API_TOKEN: TEST_API_TOKEN, ...bindings },
    durableObjects: { FINALITY_LEDGER: { className: "FinalityLedger", useSQLite: true } },
    outboundService: async (request) => {
      const url = new URL(request.url);
      outbound.push(`${request.method} ${url.pathname}`);
      if (url.hostname !== "127.0.0.1") return new Response("only loopback in tests", { status: 502 });
      const body =
        request.method === "GET" || request.method === "HEAD" ? undefined : await request.arrayBuffer();
      const answer = await fetch(url, { method: request.method, headers: request.headers, body });
      return outboundAnswer(answer, await answer.arrayBuffer());
    },
  });
  // Typed as a Fetcher by @cloudflare/workers-types, which this project does not install.
  const worker = (await mf.getWorker()) as unknown as {
    scheduled(options: { cron: string }): Promise<{ outcome: string }>;
  };
  const url = await mf.unsafeGetDirectURL();
  return {
    outbound,
    runtimeLog,
    url,
    fetch(path, init = {}) {
      const headers = new Headers(init.headers);
      if (!headers.has("authorization")) headers.set("authorization", `Bearer ${TEST_API_TOKEN}`);
      return mf.dispatchFetch(`https://finality.example${path}`, { ...init, headers } as never) as never;
    },
    async scheduled() {
      const result = await worker.scheduled({ cron: "* * * * *" });
      if (result.outcome !== "ok") throw new Error(`the scheduled run ended with ${result.outcome}`);
    },
    dispose: () => mf.dispose(),
  };
}
