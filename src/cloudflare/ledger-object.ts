import { toError } from "../core/errors.js";
import { type PruneCounts, pruneOnce } from "../engine/retention.js";
import { retentionWindowsFromConfig } from "../host/from-config.js";
import { type WorkersLedger, workersLedgerFromConfig } from "../host/workers/ledger-from-config.js";
import { problemResponse, toProblem } from "../http/problem.js";
import { sweepOnce } from "../providers/discovery-sweep.js";
import type { DurableObjectNamespace, DurableObjectState } from "./cloudflare-types.js";
import { DurableCounters } from "./durable-counters.js";
import { createDurableObjectStore, nextAlarmDueAt, releaseOrphanedClaims } from "./durable-object-store.js";
import { withItemCursors } from "./item-cursors.js";
import { STATS_PATH, TICK_PATH } from "./ledger-object-paths.js";
import { refusedStreamCursor } from "./settlement-cursor-bound.js";
import { answerDashboardPart, DASHBOARD_PART_PATH, dashboardReadsOf } from "./shard-dashboard.js";
import { SHARD_HEADERS, ShardFence } from "./shard-fence.js";
import { shardLayouts } from "./shard-layout.js";
import { answerPlacedWrite, shardPlacement } from "./shard-placement.js";
import { ShardRouter } from "./shard-router.js";
import type { ShardStats } from "./shard-stats.js";
import { configFromBindings } from "./worker-config.js";

const SETTLEMENT_STREAM_PATH = "/v1/settlements/stream";

/** The routes that take or renew a run attempt's lease. */
const RUN_PATHS = /^\/v1\/(workers|attempts|runs)(\/|$)/;

export interface TickSummary {
  polled: number;
  /** Intents flagged orphaned by this run (their alerts are delivered in the same run). */
  orphaned: number;
  /** Jobs this run's discovery sweeps adopted or attached to an intent. */
  discovered: number;
  delivered: number;
  pruned: PruneCounts;
}

/**
 * The ledger as a Durable Object: one object holds the SQLite ledger and runs the same Hono app as
 * `finality serve` on it, so every webhook and API call is answered by the single writer that
 * committed it. Its alarm delivers effects (set when a commit enqueues some, and again for the
 * next retry); the Worker's cron trigger calls TICK_PATH for a reconcile pass, an effects pass and
 * a retention pass.
 */
export class FinalityLedger {
  readonly #ctx: DurableObjectState;
  readonly #ledger: WorkersLedger | null = null;
  readonly #failure: unknown = null;
  /** The time this object last set its alarm for (null after an eviction: nothing to compare). */
  #alarmAt: number | null = null;
  readonly #fence: ShardFence;
  readonly #counters: DurableCounters;
  /** Where jobs live on a sharded Worker (shard-placement.ts); null for one ledger. */
  #placement: ReturnType<typeof shardPlacement> | null = null;

  constructor(ctx: DurableObjectState, env: Readonly<Record<string, unknown>>) {
    this.#ctx = ctx;
    this.#fence = new ShardFence(ctx.storage.sql);
    this.#counters = new DurableCounters(ctx.storage.sql);
    try {
      this.#ledger = this.#open(env);
    } catch (error) {
      // A bad configuration answers every request with its message instead of an opaque 500.
      this.#failure = error;
    }
    if (this.#ledger !== null) this.#resumeInterruptedWork(this.#ledger);
  }

  /**
   * At start (after a crash, an eviction, a deploy): what a dead run of this object left in flight
   * is due again now, and the alarm is armed for it, so delivery resumes without waiting for the
   * dead run's leases to run out or for the next cron run.
   */
  #resumeInterruptedWork(ledger: WorkersLedger): void {
    const released = releaseOrphanedClaims(this.#ctx.storage, ledger.finality.clock.now());
    if (released > 0)
      ledger.logger.warn(
        { released },
        "deliveries interrupted by a restart; sending them again under the same keys",
      );
    // Set, not merely moved sooner: the stored alarm time may be one the runtime will never act
    // on (workerd forgets an alarm whose handler was running when it was killed, while getAlarm()
    // still answers its time), and setting it again is what schedules it.
    const due = nextAlarmDueAt(this.#ctx.storage);
    if (due !== null) void this.#setAlarm(due);
  }

  async fetch(request: Request): Promise<Response> {
    const ledger = this.#ledger;
    if (ledger === null) return problemResponse(toProblem(this.#failure).problem);
    const url = new URL(request.url);
    const path = url.pathname;
    if (path === TICK_PATH)
      return request.method === "POST"
        ? Response.json(await this.tick(request.headers.get(SHARD_HEADERS.sweeps) !== "elsewhere"))
        : new Response(null, { status: 405 });
    if (path === STATS_PATH)
      return Response.json({
        ...(await this.#stats(ledger)),
        ...(url.searchParams.has("counters") ? { counters: this.#counters.read() } : {}),
      });
    if (path === DASHBOARD_PART_PATH) return this.#dashboardPart(ledger, request);
    if (path === SETTLEMENT_STREAM_PATH) {
      const refused = await refusedStreamCursor(ledger.app, request);
      if (refused !== null) return refused;
    }
    try {
      return await this.#fence.handle(request, async (admitted) => {
        const answer = (await answerPlacedWrite(ledger, admitted)) ?? (await ledger.app.fetch(admitted));
        // A claim or heartbeat moved a lease: the alarm must go off when it runs out.
        if (RUN_PATHS.test(path)) {
          const due = nextAlarmDueAt(this.#ctx.storage);
          if (due !== null) await this.#wakeAt(due);
        }
        return admitted.headers.has(SHARD_HEADERS.itemCursors)
          ? withItemCursors(this.#ctx.storage.sql, path, answer)
          : answer;
      });
    } catch (error) {
      return problemResponse(toProblem(error).problem);
    }
  }

  async #stats(ledger: WorkersLedger): Promise<ShardStats> {
    const stats = await ledger.finality.store.stats(ledger.finality.clock.now());
    return { ...stats, databaseBytes: this.#ctx.storage.sql.databaseSize };
  }

  /**
   * Delivers due effects, then sets the alarm for the next one. It never throws: a failed alarm is
   * retried by the platform on its own backoff (seconds to a minute), which would hold up every
   * effect; instead the failure is logged and the next alarm set a second from now.
   */
  async alarm(): Promise<void> {
    try {
      await this.#sweepLeases();
      await this.#deliverEffects();
    } catch (error) {
      this.#ledger?.logger.error(
        { error: toError(error).message },
        "effects alarm failed; trying again in 1 s",
      );
      await this.#wakeAt(Date.now() + 1_000);
    }
  }

  /**
   * One scheduled run: polls what webhooks missed, flags intents past their timeout, delivers due
   * effects, prunes expired rows.
   */
  async tick(sweeps = true): Promise<TickSummary> {
    const ledger = this.#ledger;
    if (ledger === null) throw this.#failure;
    const limits = ledger.config.cloudflare;
    const polled = await ledger.reconciler.runOnce(undefined, { maxPolls: limits.pollsPerRun });
    await this.#sweepLeases();
    const orphaned = (await ledger.finality.flagOrphanedIntents()).length;
    let discovered = 0;
    // One sweep per instance per cron run: the cron's schedule is the sweeps' interval here. On a
    // sharded Worker only the runs home sweeps (`sweeps`), adopting each job on its shard.
    for (const sweep of sweeps ? ledger.discovery : []) {
      const placed = this.#placement ? { ...sweep, placement: this.#placement.listings } : sweep;
      const result = await sweepOnce(ledger.finality, placed);
      discovered += result.adopted + result.attached;
    }
    const delivered = await this.#deliverEffects();
    const pruned = await pruneOnce(
      ledger.finality.store,
      retentionWindowsFromConfig(ledger.config),
      ledger.finality.clock.now(),
      {
        batchSize: limits.pruneBatch,
        maxBatches: 1,
      },
    );
    const summary = { polled, orphaned, discovered, delivered, pruned };
    ledger.logger.info(summary, "scheduled run");
    return summary;
  }

  /** The Workers host on this object's own SQLite database. */
  #open(env: Readonly<Record<string, unknown>>): WorkersLedger {
    const store = createDurableObjectStore(this.#ctx.storage);
    const config = configFromBindings(env);
    const layouts = shardLayouts(config.cloudflare);
    const namespace = env.FINALITY_LEDGER as DurableObjectNamespace | undefined;
    if (namespace !== undefined && (layouts.current.count > 1 || layouts.previous !== null)) {
      const self = this.#ctx.id?.toString();
      this.#placement = shardPlacement(
        new ShardRouter(config, namespace),
        (name) => self !== undefined && String(namespace.idFromName(name)) === self,
      );
    }
    return workersLedgerFromConfig(config, store, () => void this.#wakeAt(Date.now()), {
      metrics: this.#counters.metrics(),
      dashboardReads: dashboardReadsOf(this.#ctx, env),
      ...(this.#placement ? { intentJobPlacement: this.#placement.intents } : {}),
    });
  }

  async #dashboardPart(ledger: WorkersLedger, request: Request): Promise<Response> {
    try {
      return await answerDashboardPart(ledger.finality.store, this.#ctx.storage.sql, request);
    } catch (error) {
      return problemResponse(toProblem(error).problem);
    }
  }

  /** Ends or requeues the run attempts whose lease ran out (what `finality serve`'s sweep loop does). */
  async #sweepLeases(): Promise<void> {
    await this.#ledger?.runs.sweepOnce(this.#ledger.config.cloudflare.effectsPerRun);
  }

  async #deliverEffects(): Promise<number> {
    const ledger = this.#ledger;
    if (ledger === null) return 0;
    const limit = ledger.config.cloudflare.effectsPerRun;
    let delivered = 0;
    try {
      if (ledger.dispatcher !== null) delivered = await ledger.dispatcher.runOnce({ limit });
    } finally {
      // More due than one run may send: the next alarm goes at once, with a fresh budget.
      let next = delivered >= limit ? Date.now() : nextAlarmDueAt(this.#ctx.storage);
      // An alarm can run while the clock it reads is still a little before the time it was set for,
      // so a row due at exactly that time is not claimed yet; setting the alarm to that same time
      // again does not count as a new alarm, and the retry was lost. One millisecond later does.
      const set = this.#alarmAt;
      if (next !== null && set !== null && next <= set && set <= Date.now() + 1_000) next = set + 1;
      if (next !== null) await this.#setAlarm(next);
    }
    return delivered;
  }

  /** Sets the alarm to `at`, whatever it was. */
  async #setAlarm(at: number): Promise<void> {
    try {
      this.#alarmAt = at;
      await this.#ctx.storage.setAlarm(at);
    } catch (error) {
      this.#ledger?.logger.warn({ error: toError(error).message }, "could not set the effects alarm");
    }
  }

  /** Sets the alarm to `at` unless it is already set to go off sooner. */
  async #wakeAt(at: number): Promise<void> {
    try {
      const current = await this.#ctx.storage.getAlarm();
      if (current === null || current > at) {
        this.#alarmAt = at;
        await this.#ctx.storage.setAlarm(at);
      }
    } catch (error) {
      this.#ledger?.logger.warn({ error: toError(error).message }, "could not set the effects alarm");
    }
  }
}
