import type { FinalityConfig } from "../config/config-schema.js";
import { configSchema } from "../config/config-schema.js";
import { FinalityError } from "../core/errors.js";
import { problemResponse, toProblem } from "../http/problem.js";
import { readAtMost } from "../http/read-body.js";
import type { DurableObjectNamespace, ExecutionContext, ScheduledController } from "./cloudflare-types.js";
import { TICK_PATH } from "./ledger-object-paths.js";
import { SHARD_HEADERS } from "./shard-fence.js";
import { SINGLE_LEDGER_NAME, shardLayouts } from "./shard-layout.js";
import { ShardRouter } from "./shard-router.js";
import { configFromBindings } from "./worker-config.js";

export type { DurableObjectState, DurableObjectStorage, SqlStorage } from "./cloudflare-types.js";
export { createDurableObjectStore, migrateDurableObject } from "./durable-object-store.js";
export { FinalityLedger, type TickSummary } from "./ledger-object.js";
export type { ShardStats } from "./shard-stats.js";
export { configFromBindings };

/** The bindings the Worker needs; everything else (secrets, FINALITY_CONFIG) is read by the ledger. */
export interface FinalityWorkerEnv {
  FINALITY_LEDGER: DurableObjectNamespace;
  [binding: string]: unknown;
}

// Everything this module exports is a handler, a class or a function: workerd refuses any other
// export from a Worker's main module, and users may re-export this one whole.

/** The one ledger object every request goes to unsharded (cloudflare.shards = 1, nothing to drain). */
function ledger(env: FinalityWorkerEnv) {
  return env.FINALITY_LEDGER.get(env.FINALITY_LEDGER.idFromName(SINGLE_LEDGER_NAME));
}

interface WorkerSetup {
  bodyLimitBytes: number;
  /** Null for a configuration that does not parse (the ledger answers every request with why). */
  router: ShardRouter | null;
  /** False when the ledger is one object and nothing drains: every request goes to it, as before sharding. */
  sharded: boolean;
}

/** Answered by the Worker from every shard's counts, however many shards there are (one included). */
const OVER_EVERY_SHARD = new Set(["/metrics", "/v1/shards"]);

/** What the Worker reads of the configuration, per set of bindings (parsed once per isolate). */
const setups = new WeakMap<object, WorkerSetup>();

function setupOf(env: FinalityWorkerEnv): WorkerSetup {
  let setup = setups.get(env);
  if (setup === undefined) {
    let config: FinalityConfig | null = null;
    try {
      config = configFromBindings(env);
    } catch {
      // The ledger answers a bad configuration with its message; the body only needs a bound.
    }
    const layouts = config === null ? null : shardLayouts(config.cloudflare);
    setup = {
      bodyLimitBytes: config?.server.bodyLimitBytes ?? configSchema.parse({}).server.bodyLimitBytes,
      router: config === null ? null : new ShardRouter(config, env.FINALITY_LEDGER),
      sharded: layouts !== null && (layouts.current.count > 1 || layouts.previous !== null),
    };
    setups.set(env, setup);
  }
  return setup;
}

/**
 * What is still read of a body past the limit before the ledger answers (`finality serve` answers
 * at once and reads as much while it closes the connection; a Worker cannot read after it answers).
 */
const REFUSED_BODY_DRAIN = { bytes: 64 * 1024 * 1024, ms: 500 };

/**
 * The request as the ledger gets it: the body read here, in full up to the body limit plus one
 * byte (so that the ledger still sees it is too large, and refuses and counts it as on Node), the
 * rest let go of. A streamed body handed to the Durable Object would still be read from the
 * client after the ledger answered early (a 413, a 401, an unknown provider), and workerd throws
 * for that outside any handler ("Can't read from request stream after response has been sent"),
 * which on Cloudflare restarts the isolate and fails every other request in flight.
 */
async function withBodyRead(request: Request, limitBytes: number): Promise<Request> {
  if (request.body === null) return withoutShardHeaders(request);
  const body = await readAtMost(request, limitBytes + 1, REFUSED_BODY_DRAIN);
  const headers = new Headers(request.headers);
  // The length is the one of the bytes forwarded now (the runtime sets it), not the client's.
  headers.delete("content-length");
  headers.delete("transfer-encoding");
  // Only the Worker speaks the shard protocol: a client that sent these could retire a ledger.
  for (const header of Object.values(SHARD_HEADERS)) headers.delete(header);
  return new Request(request, { headers, body });
}

function withoutShardHeaders(request: Request): Request {
  if (!Object.values(SHARD_HEADERS).some((header) => request.headers.has(header))) return request;
  const headers = new Headers(request.headers);
  for (const header of Object.values(SHARD_HEADERS)) headers.delete(header);
  return new Request(request, { headers });
}

/**
 * The Worker: every request goes to the ledger object, which runs the same app as `finality serve`;
 * the cron trigger runs one reconcile, effects and retention pass there.
 */
const worker = {
  async fetch(request: Request, env: FinalityWorkerEnv): Promise<Response> {
    if (new URL(request.url).pathname.startsWith("/__finality/"))
      return problemResponse(toProblem(new FinalityError("not-found", "no such route")).problem);
    const setup = setupOf(env);
    let forwarded: Request;
    try {
      forwarded = await withBodyRead(request, setup.bodyLimitBytes);
    } catch (error) {
      // Only a client that went away mid-body (a 400 nobody will read).
      return problemResponse(toProblem(error).problem);
    }
    if (setup.router !== null && (setup.sharded || OVER_EVERY_SHARD.has(new URL(forwarded.url).pathname))) {
      try {
        return await setup.router.fetch(forwarded);
      } catch (error) {
        // A shard that threw (or could not be reached): this request fails, no other one does.
        return problemResponse(toProblem(error).problem);
      }
    }
    return ledger(env).fetch(forwarded);
  },

  async scheduled(
    _controller: ScheduledController,
    env: FinalityWorkerEnv,
    _ctx: ExecutionContext,
  ): Promise<void> {
    const { router, sharded } = setupOf(env);
    if (router !== null && sharded) return router.tick();
    const response = await ledger(env).fetch(
      new Request(`https://finality.internal${TICK_PATH}`, { method: "POST" }),
    );
    // A failed run shows in the cron trigger's status; the ledger logged the summary of a good one.
    if (!response.ok)
      throw new Error(`the scheduled run failed: ${response.status} ${await response.text()}`);
    await response.arrayBuffer();
  },
};

export default worker;
