import { createFinality } from "../../src/engine/create-finality.js";
import { createDispatcher, type DeliveryAttempt, type Dispatcher } from "../../src/engine/dispatcher.js";
import type { EffectDefinition } from "../../src/engine/effect-definitions.js";
import type { EffectTarget } from "../../src/engine/effect-target.js";
import type { Finality } from "../../src/engine/finality.js";
import { engineOf } from "../helpers/engine.js";
import { tempDir } from "../helpers/temp-dir.js";

// One ledger (a real SQLite file) whose one effect goes to a real broker through the outbox
// dispatcher, retrying fast (50 ms), and ways to await what it did instead of sleeping.

export interface BrokerRun {
  finality: Finality;
  dispatcher: Dispatcher;
  attempts: DeliveryAttempt[];
  /** Settles jobs `prefix-0` … `prefix-(n-1)` through the normal ingest path. */
  settle(prefix: string, n: number): Promise<void>;
  /**
   * Registers and fails job `id` at the ledger's limits: ~60 KB metadata, a 511 KB result and a
   * 511 KB error (~1.1 MB encoded, over NATS's default max_payload of 1 MB). All legal.
   */
  settleOversized(id: string): Promise<void>;
  /** Resolves once `count` effects have been delivered (rows `delivered` in the store). */
  delivered(count: number): Promise<void>;
  /** The outcome of the first attempt that ended, delivered or not (never waits for a retry). */
  firstOutcome(): Promise<DeliveryAttempt>;
  /** Resolves once `count` attempts failed. */
  failures(count: number): Promise<void>;
  /** The idempotency keys of the outbox rows. */
  keys(): Promise<string[]>;
  close(): Promise<void>;
}

export function brokerRun(definition: EffectDefinition, target: EffectTarget): BrokerRun {
  const dir = tempDir("finality-broker-");
  const finality = createFinality({ store: { sqlite: dir.file("ledger.db") }, effects: [definition] });
  const attempts: DeliveryAttempt[] = [];
  const waiters = new Set<() => void>();
  const dispatcher = createDispatcher(finality, {
    targets: { [target.kind]: target },
    retry: { scheduleMs: [50] },
    pollIntervalMs: 50,
    timeoutMs: 5000,
    random: () => 0.5,
    onAttempt: (attempt) => {
      attempts.push(attempt);
      for (const wake of [...waiters]) wake();
    },
  });
  const unsubscribe = finality.onEffectsEnqueued(() => dispatcher.poke());
  dispatcher.start();
  const until = (done: () => boolean) =>
    new Promise<void>((resolve) => {
      if (done()) return resolve();
      const wake = () => {
        if (!done()) return;
        waiters.delete(wake);
        resolve();
      };
      waiters.add(wake);
    });
  return {
    finality,
    dispatcher,
    attempts,
    async settle(prefix, n) {
      for (let i = 0; i < n; i++)
        await finality.ingest({
          provider: "acme",
          id: `${prefix}-${i}`,
          state: "succeeded",
          source: "webhook",
          deliveryId: `d-${prefix}-${i}`,
        });
    },
    async settleOversized(id) {
      await finality.register({ provider: "acme", id, metadata: OVERSIZED.metadata });
      await finality.ingest({
        provider: "acme",
        id,
        state: "failed",
        source: "webhook",
        deliveryId: `d-${id}`,
        result: OVERSIZED.result,
        error: OVERSIZED.error,
      });
    },
    delivered: (count) => until(() => attempts.filter((a) => a.outcome === "delivered").length >= count),
    async firstOutcome() {
      await until(() => attempts.length > 0);
      return attempts[0] as DeliveryAttempt;
    },
    failures: (count) => until(() => attempts.filter((a) => a.outcome === "retry").length >= count),
    async keys() {
      const { items } = await engineOf(finality).store.listEffects({ limit: 500 });
      return items.map((effect) => effect.idempotencyKey).sort();
    },
    async close() {
      unsubscribe();
      await dispatcher.stop();
      await target.close?.();
      await finality.close();
      dir.cleanup();
    },
  };
}

/** The values of `settleOversized`: each just under its limit (64 KB metadata, 512 KB result and error). */
export const OVERSIZED = {
  metadata: { note: "m".repeat(60 * 1024) },
  result: { text: "r".repeat(511 * 1024) },
  error: { message: "e".repeat(511 * 1024) },
};
