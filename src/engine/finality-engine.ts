import type { Clock } from "../core/clock.js";
import { FinalityError } from "../core/errors.js";
import type { Observation } from "../core/model.js";
import type { Store } from "../store/store.js";
import type { EffectDefinition } from "./effect-definitions.js";
import type { EffectHandoff } from "./effect-handoff.js";
import type { Finality } from "./finality-api.js";
import type { IngestContext, IngestOutcome } from "./ingest.js";
import type { JobWaiters } from "./job-waiters.js";

/**
 * The engine's own wiring behind a `Finality`: what the dispatcher, the reconciler, runs, the HTTP
 * routes and the hosts need to build their own transactions on the same ledger. Not part of the
 * public type, so that a library user sees only the ledger's operations and none of them can
 * write around the reducer. Internal modules reach it with `engineOf(finality)`.
 */
export interface FinalityEngine extends Finality {
  readonly store: Store;
  readonly clock: Clock;
  readonly effects: readonly EffectDefinition[];
  /** Same as `ingest` for an observation already validated (adapters, reconciler, hot path). */
  ingestTrusted(observation: Observation): Promise<IngestOutcome>;
  /**
   * Calls the `onEffectsEnqueued` listeners; for transactions run outside `ingest` (runs, the
   * reconciler), given to their `tx.afterCommit` so that it runs only once they have committed.
   */
  announceEffects(): void;
  /** The ingest context for `now`: policies, effects and scheduling for one transaction. */
  contextFor(provider: string, now: number): IngestContext;
  /** The waits for single jobs (`waitFor`, `GET /v1/jobs/{provider}/{id}?wait=N`), one watch per job. */
  readonly jobWaiters: JobWaiters;
  /**
   * Makes `handoff` the dispatcher that takes the effects this ledger's transactions enqueue; one
   * at a time: false when another dispatcher holds it.
   */
  takeEffectHandoff(handoff: EffectHandoff): boolean;
  /** Gives the handoff up, if `handoff` holds it: effects are enqueued pending again. */
  dropEffectHandoff(handoff: EffectHandoff): void;
}

// Keyed by the public object, so that the public object carries no internals at run time either
// (a spread or `Object.keys` of it shows only the ledger's operations). An engine maps to itself:
// internal code may hand an engine wherever a `Finality` is taken.
const engines = new WeakMap<object, FinalityEngine>();

/** Called once by `finalityOn`: `finality` is the public face of `engine`. */
export function bindEngine(finality: Finality, engine: FinalityEngine): void {
  engines.set(finality, engine);
  engines.set(engine, engine);
}

/**
 * The engine behind a `Finality` made by `finalityOn` or `createFinality`. Anything else (a copy
 * made with a spread, a hand-written stand-in) has none: refused with a message that says so,
 * rather than failing later on a missing store.
 */
export function engineOf(finality: Finality): FinalityEngine {
  const engine = engines.get(finality);
  if (engine !== undefined) return engine;
  throw new FinalityError(
    "invalid-config",
    "not a Finality instance: pass the object createFinality or finalityOn returned (not a copy or a stand-in)",
  );
}
