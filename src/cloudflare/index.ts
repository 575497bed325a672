import type { FinalityConfig } from "../config/config-schema.js";
import { configSchema } from "../config/config-schema.js";
import { FinalityError } from "../core/errors.js";
import { problemResponse, toProblem } from "../http/problem.js";
import { readAtMost } from "../http/read-body.js";
import type { DurableObjectNamespace, ExecutionContext, ScheduledController } from "./cloudflare-types.js";
import { TICK_PATH } from "./ledger-object.js";
import { configFromBindings } from "./worker-config.js";

export type { DurableObjectState, DurableObjectStorage, SqlStorage } from "./cloudflare-types.js";
export { createDurableObjectStore, migrateDurableObject } from "./durable-object-store.js";
export { FinalityLedger, type TickSummary } from "./ledger-object.js";
export { configFromBindings };

/** The bindings the Worker needs; everything else (secrets, FINALITY_CONFIG) is read by the ledger. */
export interface FinalityWorkerEnv {
  FINALITY_LEDGER: DurableObjectNamespace;
  [binding: string]: unknown;
}

// Everything this module exports is a handler, a class or a function: workerd refuses any other
// export from a Worker's main module, and users may re-export this one whole.

/** The one ledger object every request goes to (its name is part of its identity: never change it). */
const LEDGER_NAME = "ledger";

function ledger(env: FinalityWorkerEnv) {
  return env.FINALITY_LEDGER.get(env.FINALITY_LEDGER.idFromName(LEDGER_NAME));
}

/** `server.bodyLimitBytes` per set of bindings (the configuration is parsed once per isolate). */
const bodyLimits = new WeakMap<object, number>();

function bodyLimitOf(env: FinalityWorkerEnv): number {
  let limit = bodyLimits.get(env);
  if (limit === undefined) {
    let config: FinalityConfig | null = null;
    try {
      config = configFromBindings(env);
    } catch {
      // The ledger answers a bad configuration with its message; the body only needs a bound.
    }
    limit = config?.server.bodyLimitBytes ?? configSchema.parse({}).server.bodyLimitBytes;
    bodyLimits.set(env, limit);
  }
  return limit;
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
  if (request.body === null) return request;
  const body = await readAtMost(request, limitBytes + 1, REFUSED_BODY_DRAIN);
  const headers = new Headers(request.headers);
  // The length is the one of the bytes forwarded now (the runtime sets it), not the client's.
  headers.delete("content-length");
  headers.delete("transfer-encoding");
  return new Request(request, { headers, body });
}

/**
 * The Worker: every request goes to the ledger object, which runs the same app as `finality serve`;
 * the cron trigger runs one reconcile, effects and retention pass there.
 */
const worker = {
  async fetch(request: Request, env: FinalityWorkerEnv): Promise<Response> {
    if (new URL(request.url).pathname.startsWith("/__finality/"))
      return problemResponse(toProblem(new FinalityError("not-found", "no such route")).problem);
    let forwarded: Request;
    try {
      forwarded = await withBodyRead(request, bodyLimitOf(env));
    } catch (error) {
      // Only a client that went away mid-body (a 400 nobody will read).
      return problemResponse(toProblem(error).problem);
    }
    return ledger(env).fetch(forwarded);
  },

  async scheduled(
    _controller: ScheduledController,
    env: FinalityWorkerEnv,
    _ctx: ExecutionContext,
  ): Promise<void> {
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
