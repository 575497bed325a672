import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";
import { requireWorkerd } from "../../helpers/services.js";
import { bundleWorker } from "./bundle.js";
import { outboundAnswer } from "./outbound-answer.js";
import { TEST_API_TOKEN } from "./worker-ledger.js";

let bundled: Promise<string> | null = null;

/** The Worker with breakable ledger objects (helpers/breakable-entry.ts), bundled once per file. */
function script(): Promise<string> {
  bundled ??= bundleWorker(new URL("./breakable-entry.ts", import.meta.url), {
    "finality/cloudflare": fileURLToPath(new URL("../../../src/cloudflare/index.ts", import.meta.url)),
  });
  return bundled;
}

export interface ShardedWorker {
  /** A request to the named Worker version over loopback, with the API token unless it has an Authorization header. */
  fetch(version: string, path: string, init?: RequestInit): Promise<Response>;
  /** The named version's own loopback address (for a client that needs a base URL). */
  url(version: string): URL;
  /** The named version's cron trigger, once. */
  scheduled(version: string): Promise<void>;
  /** Makes the ledger object of that name throw on every request from now on. */
  breakShard(name: string): Promise<void>;
  dispose(): Promise<void>;
}

/**
 * One workerd (Miniflare) running one or more versions of the Finality Worker, each with its own
 * FINALITY_CONFIG, all bound to the same ledger objects: what Cloudflare runs for a moment while a
 * deploy rolls out. The first version defines the objects (and gives them their configuration; the
 * `cloudflare.shards` keys matter only to the Worker in front). Outbound fetches reach loopback only.
 */
export async function startShardedWorkers(
  versions: { name: string; config: Record<string, unknown> }[],
  bindings: Record<string, string> = {},
  /** `persist`: a directory the objects' storage is kept in, so that another Miniflare restarts them on it. */
  options: { persist?: string } = {},
): Promise<ShardedWorker> {
  requireWorkerd();
  const code = await script();
  const owner = versions[0]?.name ?? "";
  const mf = new Miniflare({
    ...(options.persist ? { durableObjectsPersist: options.persist } : {}),
    handleRuntimeStdio(stdout, stderr) {
      for (const stream of [stdout, stderr])
        createInterface({ input: stream }).on("line", (line) => {
          if (process.env.FINALITY_TEST_RUNTIME_LOG) console.error(`[workerd] ${line}`);
        });
    },
    workers: versions.map(({ name, config }) => ({
      name,
      // A socket per version, as Cloudflare's edge would hand it requests (no Miniflare proxy).
      unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }],
      modules: true,
      script: code,
      compatibilityDate: "2025-09-01",
      bindings: { FINALITY_CONFIG: JSON.stringify(config), FINALITY_API_TOKEN: TEST_API_TOKEN, ...bindings },
      durableObjects: {
        FINALITY_LEDGER:
          name === owner
            ? { className: "BreakableLedger", useSQLite: true }
            : { className: "BreakableLedger", useSQLite: true, scriptName: owner },
      },
      outboundService: async (request: Request) => {
        const url = new URL(request.url);
        if (url.hostname !== "127.0.0.1") return new Response("only loopback in tests", { status: 502 });
        const body =
          request.method === "GET" || request.method === "HEAD" ? undefined : await request.arrayBuffer();
        const answer = await fetch(url, { method: request.method, headers: request.headers, body });
        return outboundAnswer(answer, await answer.arrayBuffer());
      },
    })),
  });
  type Fetcher = {
    fetch(url: string, init?: RequestInit): Promise<Response>;
    scheduled(options: { cron: string }): Promise<{ outcome: string }>;
  };
  const workers = new Map<string, Fetcher>();
  const urls = new Map<string, URL>();
  for (const { name } of versions) {
    workers.set(name, (await mf.getWorker(name)) as unknown as Fetcher);
    urls.set(name, await mf.unsafeGetDirectURL(name));
  }
  const worker = (name: string) => {
    const found = workers.get(name);
    if (found === undefined) throw new Error(`no Worker version ${name}`);
    return found;
  };
  return {
    fetch(version, path, init = {}) {
      const headers = new Headers(init.headers);
      if (!headers.has("authorization")) headers.set("authorization", `Bearer ${TEST_API_TOKEN}`);
      const url = urls.get(version);
      if (url === undefined) throw new Error(`no Worker version ${version}`);
      return fetchOnFreshSocketIfClosed(new URL(path, url), { ...init, headers });
    },
    url(version) {
      const url = urls.get(version);
      if (url === undefined) throw new Error(`no Worker version ${version}`);
      return url;
    },
    async scheduled(version) {
      const result = await worker(version).scheduled({ cron: "* * * * *" });
      if (result.outcome !== "ok") throw new Error(`the scheduled run ended with ${result.outcome}`);
    },
    async breakShard(name) {
      const response = await worker(owner).fetch(
        `https://finality.example/__test/break?shard=${encodeURIComponent(name)}`,
        {
          method: "POST",
        },
      );
      if (!response.ok) throw new Error(`could not break ${name}: ${response.status}`);
      await response.arrayBuffer();
    },
    dispose: () => mf.dispose(),
  };
}

/**
 * `fetch`, sent once more when the connection it reused was closed under it (undici's
 * `UND_ERR_SOCKET`, "other side closed", no answer). workerd's HTTP server closes a keep-alive
 * connection idle for 5 s (kj's pipeline timeout); undici drops an idle one after 4 s, but its
 * timers are coarse and run late when this 2-core machine is loaded, so now and then it hands a
 * request to a socket workerd is closing at that moment (seen: bytesRead 176 = one answer, then
 * the next request written and the socket ended). workerd never read that request; a webhook
 * sender retries such a failure, and a repeated delivery is answered as a duplicate anyway.
 */
async function fetchOnFreshSocketIfClosed(url: URL, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    if (cause?.code !== "UND_ERR_SOCKET") throw error;
    return fetch(url, init);
  }
}
