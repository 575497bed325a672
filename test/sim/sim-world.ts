import { rmSync } from "node:fs";
import { manualClock, type Random, seededRandom } from "../../src/core/clock.js";
import type { Job } from "../../src/core/model.js";
import type { EffectDelivery } from "../../src/engine/effect-definitions.js";
import type { WorkerEvent } from "../../src/runs/worker-event.js";
import { type CrashSwitch, newCrashSwitch } from "./crashable-store.js";
import { EffectSink } from "./effect-sink.js";
import type { FeedReader } from "./feed-checks.js";
import { SimBroker, simBrokerTarget } from "./sim-broker.js";
import { simDiscovery } from "./sim-config.js";
import { type SimProcess, startProcess } from "./sim-process.js";
import { SimProviderTruth, simPoller } from "./sim-provider.js";
import { receiveEffect } from "./sim-receiver.js";
import type { DueRegistration } from "./sim-register.js";
import {
  type BrokerFault,
  type FaultKind,
  type PollFault,
  type ReceiverFault,
  type Schedule,
  SIM,
  SimCrash,
} from "./sim-types.js";
import type { KilledHold, SimWorker } from "./sim-workers.js";

export type Message =
  | {
      kind: "webhook";
      provider: string;
      jobId: string;
      deliveryId: string;
      state: string;
      fields: Record<string, unknown>;
      attempts: number;
      dueAt: number;
      /** A webhook sent to probe the timestamp bounds: answered once, never retried. */
      probe?: "at-bound" | "out-of-bounds";
    }
  | {
      kind: "callback";
      workerId: string;
      runId: string;
      attemptId: string;
      event: WorkerEvent;
      attempts: number;
      dueAt: number;
    };

/** A violated invariant: its name and what was seen. */
export interface Violation {
  invariant: string;
  detail: string;
}

export class InvariantViolation extends Error {
  constructor(readonly violation: Violation) {
    super(`${violation.invariant}: ${violation.detail}`);
  }
}

/**
 * Everything the simulation holds: the simulated clock, the hidden truth, the network, the
 * effect receiver, the workers' memory, and the current incarnation of the Finality process
 * over its SQLite file. The process is the only part that crashes; the rest is the world.
 */
export class SimWorld {
  readonly clock = manualClock(SIM.start);
  readonly truth = new SimProviderTruth();
  readonly sink = new EffectSink();
  readonly network: Message[] = [];
  readonly faults = new Map<FaultKind, number>();
  readonly trace: string[] = [];
  /** Delivery ids the sender got a 2xx for, by `provider/deliveryId` → job id. */
  readonly acked = new Map<string, { provider: string; jobId: string; deliveryId: string; state: string }>();
  readonly ackedToVerify: string[] = [];
  /** Jobs the application submitted whose registration is not yet acknowledged. */
  readonly pendingRegistrations: DueRegistration[] = [];
  /** States of the observations answered `parked`, by job. */
  readonly parkedStates = new Map<string, string[]>();
  /** Settlements before this time may be gone from the feed: a retention pass pruned them. */
  settlementsPrunedBefore = 0;
  /** The settlement feed's readers as they were in the middle of the schedule (feed-checks.ts). */
  feedReaders: FeedReader[] = [];
  /** Jobs retention pruned (their tombstone kept), by job → when. */
  readonly pruned = new Map<string, number>();
  /** Pruned jobs as they were in the ledger just before the pass that pruned them. */
  readonly prunedAs = new Map<string, Job>();
  /**
   * Pruned jobs whose tombstone a pass may have pruned too: it ran when every way back had closed
   * (sim-late.ts, `tombstoneMayGo`). The end checks hold every other pruned job to its tombstone.
   */
  readonly tombstoneMayBeGone = new Set<string>();
  /** At the end checks: pruned jobs as their tombstones tell (state and settledAt only). */
  readonly tombstoned = new Map<string, Job>();
  readonly registeredAt = new Map<string, number>();
  readonly runIds: string[] = [];
  /** Runs the application asked for whose enqueue is not yet acknowledged (by idempotency key). */
  readonly pendingEnqueues: string[] = [];
  readonly workers: SimWorker[] = [];
  readonly killedHolds: KilledHold[] = [];
  /**
   * Worker reports (`attemptId:sequence`) handed to the server at least once, committed or not:
   * only these may be answered `duplicate` (`callback-heard`).
   */
  readonly callbacksTried = new Set<string>();
  readonly power: CrashSwitch;
  phase: "chaos" | "heal" = "chaos";
  skewMs = 0;
  /** Jobs (`provider/id`) a completed discovery sweep listed while within its lookback. */
  readonly listedInReach = new Set<string>();
  /** When the process's discovery loop sweeps next (sim-discovery.ts): an interval after it started. */
  nextSweepAt = SIM.start;
  restarts = 0;
  submitted = 0;
  enqueued = 0;
  claims = 0;
  /** Claims whose client went away; every other one asks to start the run too. */
  abortedClaims = 0;
  healAt = 0;
  proc!: SimProcess;
  /** Faults for the operation in progress; the heal phase has none. */
  pollFault: () => PollFault = () => "ok";
  receiverFault: () => ReceiverFault = () => "ok";
  brokerFault: () => BrokerFault = () => "ok";
  /** The broker the `bus` effect publishes to; outside the process, so it outlives crashes. */
  readonly broker = new SimBroker();
  /** A number in [0, 1) for the receiver's fault in progress (how slow a slow one is). */
  receiverRandom: () => number = () => 0;
  /** During a dispatch step: the latest time a receiver may take the clock to (see sim-receiver.ts). */
  inFlightClockCap: number | null = null;
  /** Whether the second replica's dispatcher is running (it runs one level deep). */
  inReplica = false;
  /** A violation seen where it cannot be thrown (inside an effect handler); the checker throws it. */
  deferred: Violation | null = null;
  private idCounter = 0;
  readonly processSeed: number;

  constructor(
    readonly schedule: Schedule,
    readonly path: string,
  ) {
    this.processSeed = schedule.seed;
    this.power = newCrashSwitch((mode, midSweep) => {
      this.count(mode === "before-commit" ? "crash-before-commit" : "crash-after-commit");
      if (midSweep) this.count("crash-mid-sweep");
      this.log(`  ! process crashed ${mode}${midSweep ? " (mid-sweep)" : ""}`);
    });
    removeDatabase(path);
    this.proc = this.startProcess();
    this.nextSweepAt = SIM.start + (simDiscovery(schedule.config.parsed)?.intervalMs ?? 0);
  }

  now(): number {
    return this.clock.now();
  }

  count(kind: FaultKind, n = 1): void {
    this.faults.set(kind, (this.faults.get(kind) ?? 0) + n);
  }

  log(line: string): void {
    this.trace.push(line);
  }

  /** Ids unique across restarts and sortable like uuidv7 (several parts order by id). */
  newId = (): string => `sim${String(++this.idCounter).padStart(10, "0")}`;

  /** A random source for the step in progress, independent of every other step. */
  stepRandom(rand: number): Random {
    return seededRandom(rand);
  }

  private startProcess(): SimProcess {
    const random = seededRandom((this.processSeed ^ (this.restarts * 0x9e3779b9)) >>> 0);
    return startProcess({
      path: this.path,
      clock: this.clock,
      power: this.power,
      newId: this.newId,
      random,
      poller: simPoller({
        truth: this.truth,
        now: () => this.now(),
        advance: (ms) => this.clock.advance(ms),
        assertAlive: () => this.assertAlive(),
        nextFault: () => this.pollFault(),
        random,
        skewMs: () => this.skewMs,
        log: (line) => this.log(line),
      }),
      deliverEffect: (delivery) => this.guardInFlight(delivery, () => receiveEffect(this, delivery)),
      brokerTarget: simBrokerTarget(this),
      effectTimeoutMs: this.schedule.effectTimeoutMs,
      effectLeaseMs: this.schedule.effectLeaseMs,
      effectHandoff: this.schedule.effectHandoff,
      config: this.schedule.config.parsed,
    });
  }

  assertAlive(): void {
    if (this.power.dead) throw new SimCrash("the process is down");
  }

  /** After a crash: drop everything in memory, start again from what the file holds. */
  async restartIfDead(): Promise<boolean> {
    if (!this.power.dead) return false;
    await this.proc.stop();
    this.restarts++;
    this.power.armed = null;
    this.power.dead = false;
    this.power.sweeping = false;
    this.proc = this.startProcess();
    // A new process's discovery loop waits a whole interval before its first sweep.
    this.nextSweepAt = this.now() + (simDiscovery(this.schedule.config.parsed)?.intervalMs ?? 0);
    this.log("  ~ restarted from the database file");
    return true;
  }

  /** Arms the receiver so that the next effect it applies crashes the process before it is marked done. */
  crashAfterNextSend = false;

  /**
   * The receiver, seen from the process. `no-parallel-delivery`: an effect (its idempotency key)
   * is never in flight twice at once. A violation seen inside the handler is kept for the step
   * checker: thrown here, the dispatcher would take it for a failed delivery.
   */
  async guardInFlight(delivery: EffectDelivery, send: () => Promise<void>): Promise<void> {
    const key = delivery.idempotencyKey;
    if (this.sink.inFlight.has(key))
      this.deferred ??= {
        invariant: "no-parallel-delivery",
        detail: `${delivery.effect} of ${delivery.job.provider}/${delivery.job.id} (key ${key}) was sent while a delivery of it was still in flight`,
      };
    this.sink.inFlight.add(key);
    try {
      await send();
    } finally {
      this.sink.inFlight.delete(key);
    }
  }

  async close(): Promise<void> {
    await this.proc.stop();
    removeDatabase(this.path);
  }
}

function removeDatabase(path: string): void {
  for (const suffix of ["", "-wal", "-shm"]) rmSync(path + suffix, { force: true });
}
