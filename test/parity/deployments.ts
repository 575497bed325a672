import { startShardedWorkers } from "../cloudflare/helpers/sharded-workers.js";
import { TEST_API_TOKEN } from "../cloudflare/helpers/worker-ledger.js";
import {
  adminClient,
  dropSchema,
  POSTGRES_TEST_URL,
  requirePostgres,
  uniqueSchemaName,
} from "../helpers/postgres.js";
import { tempDir } from "../helpers/temp-dir.js";
import type { Service } from "../http/helpers/service.js";
import { serveWith } from "../service/service-helpers.js";

/** The API token every deployment gets, so that one scenario's requests fit all three. */
export const API_TOKEN = TEST_API_TOKEN;

/** A deployment started with one configuration: where to send requests, and what can go wrong with it. */
export interface Running {
  /** Base URLs without a trailing slash: one for SQLite and Workers, the three replicas for PostgreSQL. */
  readonly urls: string[];
  /** A request to the next URL in turn (a load balancer's round robin), with the API token unless it has an Authorization header. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /**
   * One round of periodic work (reconcile, discovery, orphan scan, retention): the cron trigger
   * on Workers; `finality serve` runs its own loops, so there it only yields.
   */
  tick(): Promise<void>;
  stop(): Promise<void>;
  /** Fault hooks this deployment offers (a scenario for a fault a deployment lacks is not run there). */
  readonly faults: {
    /** The replica processes (PostgreSQL replicas only), for SIGKILL, SIGSTOP and SIGCONT. */
    replicas?: Service[];
    /** The PostgreSQL schema and the sessions' application_name per replica, to cut or inspect them. */
    postgres?: { schema: string; applicationNames: string[] };
    /** Stops workerd and starts it again on the same Durable Object storage (Workers only). */
    restart?: () => Promise<void>;
  };
}

export interface Deployment {
  readonly name: "sqlite" | "postgres×3" | "workers×4";
  /**
   * Starts the deployment with `config` (a `finality serve` config without `store` or
   * `cloudflare`).
   */
  start(config: Record<string, unknown>): Promise<Running>;
  /** Frees what every start left behind (schemas, directories). */
  cleanup(): Promise<void>;
}

function withToken(config: Record<string, unknown>): Record<string, unknown> {
  const server = (config.server ?? {}) as Record<string, unknown>;
  return { ...config, server: { ...server, apiToken: API_TOKEN } };
}

function roundRobin(urls: () => string[]) {
  let turn = 0;
  return (path: string, init: RequestInit = {}) => {
    const live = urls();
    const base = live[turn++ % live.length] as string;
    const headers = new Headers(init.headers);
    if (!headers.has("authorization")) headers.set("authorization", `Bearer ${API_TOKEN}`);
    return fetch(`${base}${path}`, { ...init, headers });
  };
}

/** `finality serve` on a SQLite file of its own. */
export function sqliteDeployment(): Deployment {
  const dir = tempDir("finality-parity-sqlite-");
  let count = 0;
  return {
    name: "sqlite",
    async start(config) {
      const n = count++;
      const service = await serveWith(dir, dir.file(`ledger-${n}.db`), withToken(config), `config-${n}.json`);
      const urls = [service.url];
      return {
        urls,
        fetch: roundRobin(() => urls),
        tick: () => new Promise((resolve) => setImmediate(resolve)),
        stop: async () => {
          await service.stop("SIGTERM");
        },
        faults: {},
      };
    },
    async cleanup() {
      dir.cleanup();
    },
  };
}

/** Three `finality serve` replicas on one PostgreSQL schema, requests spread over them. */
export function postgresDeployment(replicaCount = 3): Deployment {
  const dir = tempDir("finality-parity-pg-");
  const schemas: string[] = [];
  return {
    name: "postgres×3",
    async start(config) {
      await requirePostgres("the deployment parity suite's PostgreSQL replicas");
      const schema = uniqueSchemaName("finality_parity");
      schemas.push(schema);
      const store = (config.store ?? {}) as Record<string, unknown>;
      const names = Array.from({ length: replicaCount }, (_, i) => `${schema}_r${i}`);
      // Started together: the migration lock, not luck, keeps them from migrating twice.
      const replicas = await Promise.all(
        names.map((name) =>
          serveWith(
            dir,
            undefined,
            withToken({
              ...config,
              store: { ...store, postgres: `${POSTGRES_TEST_URL}?application_name=${name}`, schema },
            }),
            `${name}.json`,
          ),
        ),
      );
      const live = () => replicas.filter((r) => r.child.exitCode === null && r.child.signalCode === null);
      return {
        urls: replicas.map((r) => r.url),
        fetch: roundRobin(() => live().map((r) => r.url)),
        tick: () => new Promise((resolve) => setImmediate(resolve)),
        stop: async () => {
          for (const r of replicas) r.child.kill("SIGCONT");
          await Promise.all(replicas.map((r) => r.stop("SIGKILL")));
        },
        faults: { replicas, postgres: { schema, applicationNames: names } },
      };
    },
    async cleanup() {
      const sql = adminClient();
      try {
        for (const schema of schemas) await dropSchema(sql, schema);
      } finally {
        await sql.end({ timeout: 5 });
        dir.cleanup();
      }
    },
  };
}

/**
 * A Worker whose configuration is refused still starts: its ledger objects answer every request
 * with the refusal (what `wrangler deploy` then shows on the first request). The deployment's
 * start reads that answer, so that a refusal ends `start` on every deployment alike.
 */
async function refusedConfiguration(base: string, dispose: () => Promise<void>): Promise<void> {
  const response = await fetch(`${base}/readyz`, { headers: { authorization: `Bearer ${API_TOKEN}` } });
  const text = await response.text();
  if (response.status < 500 || !response.headers.get("content-type")?.includes("problem+json")) return;
  const problem = JSON.parse(text) as { detail?: string; title?: string };
  const message = problem.detail ?? problem.title ?? text;
  if (!/config error/.test(message)) return;
  await dispose();
  throw new Error(`the Worker refuses its configuration: ${message}`);
}

/** The Worker in workerd with `cloudflare.shards` ledger objects (4 unless told). */
export function workersDeployment(shards = 4): Deployment {
  const dir = tempDir("finality-parity-workers-");
  let count = 0;
  return {
    name: "workers×4",
    async start(config) {
      const persist = dir.file(`objects-${count++}`);
      const versions = [{ name: "v", config: { ...withToken(config), cloudflare: { shards } } }];
      let worker = await startShardedWorkers(versions, {}, { persist });
      const base = () => worker.url("v").toString().replace(/\/$/, "");
      await refusedConfiguration(base(), () => worker.dispose());
      const urls = [base()];
      return {
        get urls() {
          return urls;
        },
        fetch: roundRobin(() => urls),
        tick: () => worker.scheduled("v"),
        stop: () => worker.dispose(),
        faults: {
          async restart() {
            await worker.dispose();
            worker = await startShardedWorkers(versions, {}, { persist });
            urls[0] = base();
          },
        },
      };
    },
    async cleanup() {
      dir.cleanup();
    },
  };
}

/**
 * The three deployments every scenario runs on. `FINALITY_PARITY_ONLY=workers` (or `sqlite`,
 * `postgres`, comma-separated) keeps some, when chasing one deployment's failure.
 */
export function parityDeployments(only = process.env.FINALITY_PARITY_ONLY): Deployment[] {
  const all = [sqliteDeployment, postgresDeployment, workersDeployment].map((make) => make());
  if (!only) return all;
  const wanted = only.split(",").map((w) => w.trim());
  const kept = all.filter((d) => wanted.some((w) => d.name.startsWith(w)));
  if (kept.length === 0)
    throw new Error(`FINALITY_PARITY_ONLY=${only} names no deployment (sqlite, postgres, workers)`);
  return kept;
}
