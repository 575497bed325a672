import { FinalityError } from "../core/errors.js";
import { problemResponse, toProblem } from "../http/problem.js";
import type { DurableObjectNamespace, ExecutionContext, ScheduledController } from "./cloudflare-types.js";
import { TICK_PATH } from "./ledger-object.js";

export type { DurableObjectState, DurableObjectStorage, SqlStorage } from "./cloudflare-types.js";
export { createDurableObjectStore, migrateDurableObject } from "./durable-object-store.js";
export { FinalityLedger, type TickSummary } from "./ledger-object.js";
export { configFromBindings } from "./worker-config.js";

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

/**
 * The Worker: every request goes to the ledger object, which runs the same app as `finality serve`;
 * the cron trigger runs one reconcile, effects and retention pass there.
 */
const worker = {
  async fetch(request: Request, env: FinalityWorkerEnv): Promise<Response> {
    if (new URL(request.url).pathname.startsWith("/__finality/"))
      return problemResponse(toProblem(new FinalityError("not-found", "no such route")).problem);
    return ledger(env).fetch(request);
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
