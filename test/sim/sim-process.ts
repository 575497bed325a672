import type { FinalityConfig } from "../../src/config/config-schema.js";
import type { Clock, Random } from "../../src/core/clock.js";
import { createFinality } from "../../src/engine/create-finality.js";
import { createDispatcher, type Dispatcher } from "../../src/engine/dispatcher.js";
import type { EffectDelivery } from "../../src/engine/effect-definitions.js";
import type { EffectTarget } from "../../src/engine/effect-target.js";
import type { Finality } from "../../src/engine/finality.js";
import type { Poller } from "../../src/engine/poller.js";
import { createReconciler, type Reconciler } from "../../src/engine/reconciler.js";
import { noopMetrics } from "../../src/http/service-metrics.js";
import { createWebhookIntake, type WebhookIntake } from "../../src/http/webhook-intake.js";
import { createWebhookReceivers } from "../../src/providers/node-providers.js";
import { createRunService, type RunService } from "../../src/runs/run-service.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { type CrashSwitch, crashableStore } from "./crashable-store.js";
import { mutateRuns } from "./mutant/process-mutants.js";
import { mutateStore } from "./mutant/store-mutants.js";
import { acmePolled } from "./sim-config.js";
import { SIM } from "./sim-types.js";

/** One incarnation of the Finality process: everything in memory, over the durable file. */
export interface SimProcess {
  finality: Finality;
  reconciler: Reconciler;
  dispatcher: Dispatcher;
  replica: Dispatcher;
  runs: RunService;
  intake: WebhookIntake;
  /** The process goes away: waits for what it has in flight, then lets go of the file. */
  stop(): Promise<void>;
}

export interface ProcessOptions {
  path: string;
  clock: Clock;
  power: CrashSwitch;
  newId: () => string;
  random: Random;
  poller: Poller;
  deliverEffect: (delivery: EffectDelivery) => Promise<void>;
  /** Where the `bus` effect (a NATS destination) goes: the simulated broker. */
  brokerTarget: EffectTarget;
  effectTimeoutMs: number;
  effectLeaseMs: number;
  /** The dispatcher takes effects from the transactions that enqueue them (Schedule.effectHandoff). */
  effectHandoff: boolean;
  /** The schedule's configuration, parsed and checked (sim-config.ts). */
  config: FinalityConfig;
}

/**
 * Wires the real parts exactly as `finality serve` does, with the simulated clock, ids, random
 * source, poller and effect target injected, and the store behind the crash switch. Loops are
 * never started: the simulator calls their `runOnce` entry points, so no real timer runs.
 */
export function startProcess(options: ProcessOptions): SimProcess {
  const { clock, power, config } = options;
  const { on, kinds, providers } = config.effects.find((e) => e.name === "render-done")!;
  const renderDone = { on, kinds, providers };
  // The simulator crashes the process, never the machine: NORMAL keeps every commit through that,
  // and spares a quarter of a million fsyncs per thousand schedules.
  const store = mutateStore(
    crashableStore(createSqliteStore({ path: options.path, synchronous: "NORMAL" }), power),
  );
  const finality = createFinality({
    store,
    clock,
    newId: options.newId,
    providers: {
      acme: { unknownJobs: config.providers.acme!.unknownJobs, graceSeconds: SIM.graceMs / 1000 },
      beta: { unknownJobs: config.providers.beta!.unknownJobs, graceSeconds: SIM.graceMs / 1000 },
    },
    maxClockSkewSeconds: config.ingest.maxClockSkewSeconds,
    effects: [
      { name: "notify", handler: options.deliverEffect },
      { name: "alert", on: ["stuck"], handler: options.deliverEffect },
      // Kind-filtered: a job adopted from a webhook has no kind until the application registers it.
      { name: "render-done", ...renderDone, handler: options.deliverEffect },
      // A broker destination, through the dispatcher's target interface like a real one.
      {
        name: "bus",
        on: ["succeeded", "failed"],
        nats: { servers: ["nats://sim:4222"], subject: "sim", stream: "SIM" },
      },
    ],
  });
  const lane = {
    minMs: SIM.reconcileMinMs,
    maxMs: SIM.reconcileMaxMs,
    stuckAfterMs: SIM.stuckAfterMs,
    timeoutMs: SIM.pollTimeoutMs,
    poller: options.poller,
  };
  const { poller: _poller, ...unpolled } = lane;
  const reconciler = createReconciler(finality, {
    providers: {
      // Without polling (discovery on), acme's lane only reschedules its jobs and flags them stuck.
      acme: acmePolled(config) ? { ...lane, concurrency: 3 } : { ...unpolled, concurrency: 3 },
      beta: { ...lane, concurrency: 2, rateLimit: SIM.betaRate },
    },
    random: options.random,
  });
  const dispatcherOptions = {
    concurrency: 4,
    timeoutMs: options.effectTimeoutMs,
    leaseMs: options.effectLeaseMs,
    retry: { scheduleMs: SIM.effectRetryMs, maxAgeMs: 7 * 24 * 3_600_000 },
    random: options.random,
    targets: { nats: options.brokerTarget },
  };
  const dispatcher = createDispatcher(finality, { ...dispatcherOptions, handoff: options.effectHandoff });
  // A second replica's dispatcher over the same database, run while a slow delivery is in flight.
  const replica = createDispatcher(finality, dispatcherOptions);
  const runs = mutateRuns(
    createRunService({
      finality,
      random: options.random,
      newId: options.newId,
      defaultLeaseSeconds: SIM.leaseSeconds,
      defaultMaxAttempts: SIM.maxAttempts,
      maxUnstartedReleases: SIM.maxUnstartedReleases,
      retry: SIM.runRetry,
    }),
  );
  const intake = createWebhookIntake({
    finality,
    receivers: createWebhookReceivers(config.providers, () => clock.now()),
    metrics: noopMetrics,
  });
  return {
    finality,
    reconciler,
    dispatcher,
    replica,
    runs,
    intake,
    async stop() {
      power.dead = true;
      await reconciler.stop();
      await dispatcher.stop();
      await replica.stop();
      runs.close();
      await finality.close();
    },
  };
}
