import { createFinality } from "../../dist/exports/sqlite.js";
import { createDispatcher } from "../../dist/index.js";
import { jobSteps } from "./job-steps.js";

/**
 * The library over the SQLite file `file` (NORMAL), and with `effect` one effect on `succeeded`
 * (a handler that returns at once) and a dispatcher poked by each enqueue, as `serve` runs it
 * (src/host/node/background-loop.ts). `close` stops both.
 */
export function openLedger(file, effect) {
  const finality = createFinality({
    store: { sqlite: file, synchronous: "NORMAL" },
    effects: effect ? [{ name: "notify", on: ["succeeded"], handler: async () => {} }] : [],
  });
  const dispatcher = effect ? createDispatcher(finality) : null;
  const unsubscribe = dispatcher ? finality.onEffectsEnqueued(() => dispatcher.poke()) : () => {};
  dispatcher?.start();
  return {
    finality,
    /** Delivers what is still due, so that every effect enqueued so far is finished. */
    drain: async () => {
      await dispatcher?.runOnce();
    },
    close: async () => {
      unsubscribe();
      await dispatcher?.stop();
      await finality.close();
    },
  };
}

/** The benches' workload (lib/job-steps.js) as the library's observations, as `intake-callgrind.js` sends them over HTTP. */
export function libraryObservations(prefix, count) {
  return jobSteps(prefix, count, ({ jobId, state, seq, result }, n) => ({
    provider: "acme",
    id: jobId,
    state,
    seq,
    source: "webhook",
    deliveryId: `${prefix}-msg-${n}`,
    ...(result === undefined ? {} : { result }),
  }));
}

/** Ingests `observations` in order, `inFlight` at a time, as that many webhook connections would. */
export async function ingestAll(finality, observations, inFlight) {
  let next = 0;
  const lane = async () => {
    while (next < observations.length) await finality.ingest(observations[next++]);
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
}
