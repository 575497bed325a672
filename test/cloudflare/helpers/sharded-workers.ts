import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";
import { bundleWorker } from "./bundle.js";
import { TEST_API_TOKEN } from "./worker-ledger.js";

let bundled: Promise<string> | null = null;

/** The Worker with breakable ledger objects (helpers/breakable-entry.ts), bundled once per file. */
function script(): Promise<string> {
  bundled ??= bundleWorker(new URL("./breakable-entry.ts", import.meta.url), {
    "finality/workers": fileURLToPath(new URL("../../../src/cloudflare/index.ts", import.meta.url)),
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
        const bytes = await answer.arrayBuffer();
        return new Response(bytes.byteLength > 0 ? bytes : null, {
          status: answer.status,
          headers: answer.headers,
        });
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
      return fetch(new URL(path, url), { ...init, headers });
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
