import type { FinalityConfig } from "../config/config-schema.js";
import { FinalityError } from "../core/errors.js";
import { isValidId } from "../core/job-id.js";
import type { JobKey } from "../core/model.js";
import { type WebhookRouteKey, webhookRouteKey } from "../host/workers/webhook-route-key.js";
import { constantTimeEqual } from "../http/constant-time-equal.js";
import { problemResponse, toProblem } from "../http/problem.js";
import type { DurableObjectNamespace } from "./cloudflare-types.js";
import { type CounterSample, renderSummedCounters } from "./durable-counters.js";
import { mergeableList } from "./item-cursors.js";
import { STATS_PATH, TICK_PATH } from "./ledger-object-paths.js";
import { encodeShardKey, SHARD_HEADERS } from "./shard-fence.js";
import { mergedIntents } from "./shard-intents.js";
import { type ShardLayouts, SINGLE_LEDGER_NAME, shardLayouts, shardNameOf } from "./shard-layout.js";
import { mergedList } from "./shard-lists.js";
import { mergedSettlementStream, mergedSettlements } from "./shard-settlements.js";
import { renderShardMetrics, shardsOverview } from "./shard-stats.js";

type Role = "current" | "previous" | "runs";

/** The routes of runs and the worker API: all on the runs home. */
const RUN_ROUTES = /^\/v1\/(runs|workers|attempts)(\/|$)/;

/**
 * Intents live on the runs home too (never moved by a reshard, like runs): recording, reading,
 * attaching (the home registers the job on its shard, shard-placement.ts) and the dashboard's
 * intents page. Only the list is merged (an attached intent's copy sits beside its job).
 */
const INTENT_ROUTES = /^(\/v1)?\/intents(\/|$)/;

/** The provider name runs are mirrored under as jobs (reserved: config refuses it for a provider). */
const RUNS_PROVIDER = "runs";

const JOB_SUFFIXES = ["/events", "/observations", "/replay-effects"];

/** The dashboard's pages that show every shard: the first current shard renders them from all (shard-dashboard.ts). */
const MERGED_PAGES = new Set(["/", "/jobs", "/effects", "/parked"]);

/**
 * The Worker's side of the sharded ledger: which object answers a request. A request about one
 * job goes to that job's shard (during a reshard: the draining layout's shard if it already knows
 * the job, else the current one); a list, the overview and /metrics are merged over every shard;
 * anything else (the dashboard, runs, parked observations) goes to the first current shard.
 */
export class ShardRouter {
  readonly layouts: ShardLayouts;
  readonly #namespace: DurableObjectNamespace;
  readonly #routeKey: WebhookRouteKey;
  readonly #apiToken: string | undefined;

  constructor(config: FinalityConfig, namespace: DurableObjectNamespace) {
    this.layouts = shardLayouts(config.cloudflare);
    this.#namespace = namespace;
    this.#routeKey = webhookRouteKey(config);
    this.#apiToken = config.server.apiToken;
  }

  /**
   * Every object with its role: the current layout's, then the draining one's, then the runs
   * home when it is in neither. Runs are not sharded: a claim takes any queued run of its kinds,
   * which one object answers in one transaction; they live on the object named `ledger` whatever
   * the layout, so that resharding never moves them (with one shard it is the ledger itself).
   */
  shards(): { name: string; layout: Role }[] {
    const { current, previous } = this.layouts;
    const all: { name: string; layout: Role }[] = [
      ...current.names.map((name) => ({ name, layout: "current" as const })),
      ...(previous?.names ?? []).map((name) => ({ name, layout: "previous" as const })),
    ];
    if (!all.some((s) => s.name === SINGLE_LEDGER_NAME))
      all.push({ name: SINGLE_LEDGER_NAME, layout: "runs" });
    return all;
  }

  /** `request`'s body is already read into memory by the Worker (see index.ts), so it can be sent twice. */
  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const path = url.pathname;
    const method = request.method;
    if (path === "/metrics" && (method === "GET" || method === "HEAD")) return this.#metrics();
    if (path === "/v1/shards" && method === "GET") return this.#overview(request);
    if (path.startsWith("/webhooks/") && method === "POST") {
      const body = new Uint8Array(await request.clone().arrayBuffer());
      const provider = decodeURIComponent(path.slice("/webhooks/".length));
      const key = await this.#routeKey(provider, body, request.headers);
      return this.#toJob(key, request);
    }
    if (RUN_ROUTES.test(path))
      return this.#send(SINGLE_LEDGER_NAME, this.#roleOf(SINGLE_LEDGER_NAME), request);
    if (path === "/v1/intents" && (method === "GET" || method === "HEAD"))
      return mergedIntents(request, this.shardNames(), SINGLE_LEDGER_NAME, (name, r) => this.sendTo(name, r));
    if (INTENT_ROUTES.test(path))
      return this.#send(SINGLE_LEDGER_NAME, this.#roleOf(SINGLE_LEDGER_NAME), request);
    if (path === "/v1/jobs" && method === "POST") return this.#toJob(await registeredKey(request), request);
    if (path.startsWith("/v1/jobs/")) return this.#toJob(jobKeyOfPath(path, "/v1/jobs/"), request);
    // The dashboard's job page, from the job's shard; its runs page, from the runs home.
    if (path.startsWith("/jobs/")) return this.#toJob(jobKeyOfPath(path, "/jobs/"), request);
    if (path === "/runs") return this.#send(SINGLE_LEDGER_NAME, this.#roleOf(SINGLE_LEDGER_NAME), request);
    if (path.startsWith("/v1/settlements") && method === "GET") {
      const merged = this.#settlements(path, request);
      if (merged !== null) return merged;
    }
    if (mergeableList(path) && (method === "GET" || method === "HEAD"))
      return mergedList(request, this.shardNames(), (name, r) => this.#send(name, this.#roleOf(name), r));
    if (/^(\/v1)?\/effects\/[^/]+\/retry$/.test(path) && method === "POST") return this.#firstFound(request);
    if (MERGED_PAGES.has(path) && (method === "GET" || method === "HEAD"))
      return this.#send(this.#home(), "current", request, {
        [SHARD_HEADERS.shards]: this.shardNames().join(","),
      });
    return this.#send(this.#home(), "current", request);
  }

  shardNames(): string[] {
    return this.shards().map((s) => s.name);
  }

  /**
   * One scheduled run on every shard at once, each with its own budget; one failure fails the run.
   * Discovery sweeps run on the runs home only (it holds the intents and the sweeps' cursors), which
   * adopts each listed job on its shard: one list call per provider instance per run.
   */
  async tick(): Promise<void> {
    const results = await Promise.allSettled(
      this.shards().map(async ({ name, layout }) => {
        const response = await this.#send(
          name,
          layout,
          new Request(`https://finality.internal${TICK_PATH}`, { method: "POST" }),
          { [SHARD_HEADERS.sweeps]: name === SINGLE_LEDGER_NAME ? "here" : "elsewhere" },
        );
        if (!response.ok) throw new Error(`${name}: ${response.status} ${await response.text()}`);
        await response.arrayBuffer();
      }),
    );
    const failed = results.flatMap((r) => (r.status === "rejected" ? [String(r.reason)] : []));
    if (failed.length > 0)
      throw new Error(`the scheduled run failed on ${failed.length} shard(s): ${failed.join("; ")}`);
  }

  /**
   * To the shard of `key` (null: a request no shard will take, such as a webhook that failed its
   * signature check; the first current shard refuses it and counts it, as the single ledger did).
   */
  async #toJob(key: JobKey | null, request: Request): Promise<Response> {
    return key === null ? this.#send(this.#home(), "current", request) : this.sendToJob(key, request);
  }

  /**
   * To the object that holds `key` or takes it: during a reshard the draining layout's shard when
   * it knows the job, else the current one (the fence makes that answer final, shard-fence.ts).
   * Used by the Worker, and by the runs home for the jobs it attaches and adopts.
   */
  async sendToJob(key: JobKey, request: Request): Promise<Response> {
    // A run's job (provider "runs") lives beside its run.
    if (key.provider === RUNS_PROVIDER)
      return this.#send(SINGLE_LEDGER_NAME, this.#roleOf(SINGLE_LEDGER_NAME), request);
    const previous = this.layouts.previous;
    if (previous !== null) {
      const old = await this.#send(shardNameOf(key, previous), "previous", request, {
        [SHARD_HEADERS.existingOnly]: encodeShardKey(key),
      });
      if (!(old.status === 421 && old.headers.has(SHARD_HEADERS.notHere))) return old;
    }
    return this.#send(shardNameOf(key, this.layouts.current), "current", request);
  }

  /** The settlement feed and its stream, merged over every object that holds jobs (shard-settlements.ts). */
  #settlements(path: string, request: Request): Promise<Response> | null {
    const send = (name: string, r: Request) => this.#send(name, this.#roleOf(name), r);
    if (path === "/v1/settlements") return mergedSettlements(request, this.shardNames(), send);
    if (path === "/v1/settlements/stream") return mergedSettlementStream(request, this.shardNames(), send);
    return null;
  }

  /** Tries every shard until one has what the request is about (an effect id names no job). */
  async #firstFound(request: Request): Promise<Response> {
    let last: Response | null = null;
    for (const { name, layout } of this.shards()) {
      last = await this.#send(name, layout, request);
      if (last.status !== 404) return last;
    }
    return last as Response;
  }

  async #overview(request: Request): Promise<Response> {
    const given = request.headers.get("authorization")?.replace(/^Bearer\s+/i, "") ?? "";
    if (this.#apiToken !== undefined && !constantTimeEqual(given, this.#apiToken))
      return problemResponse(
        toProblem(new FinalityError("unauthorized", "a valid API token is required")).problem,
      );
    return Response.json(await this.#readOverview());
  }

  /** The gauges and the durable counters (durable-counters.ts) of every shard, from one read each. */
  async #metrics(): Promise<Response> {
    const overview = await this.#readOverview("?counters=1");
    const counters = overview.shards.map(
      (s) => ((s.stats as { counters?: CounterSample[] } | null)?.counters ?? null) as CounterSample[] | null,
    );
    const text = renderShardMetrics(overview, Date.now()) + renderSummedCounters(counters);
    return new Response(text, { headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8" } });
  }

  #readOverview(query = "") {
    return shardsOverview(
      this.shards(),
      () => new Request(`https://finality.internal${STATS_PATH}${query}`),
      (name, r) => this.#send(name, this.#roleOf(name), r),
    );
  }

  /** To the named object, addressed in the role it has in these layouts. */
  sendTo(name: string, request: Request): Promise<Response> {
    return this.#send(name, this.#roleOf(name), request);
  }

  #home(): string {
    return this.layouts.current.names[0] as string;
  }

  #roleOf(name: string): Role {
    if (this.layouts.current.names.includes(name)) return "current";
    return this.layouts.previous?.names.includes(name) ? "previous" : "runs";
  }

  #send(name: string, as: Role, request: Request, extra: Record<string, string> = {}): Promise<Response> {
    const headers = new Headers(request.headers);
    // Only the Worker speaks the shard protocol: whatever a client sent under these names goes.
    for (const header of Object.values(SHARD_HEADERS))
      if (header !== SHARD_HEADERS.itemCursors) headers.delete(header);
    headers.set(SHARD_HEADERS.layout, String(this.layouts.current.count));
    headers.set(SHARD_HEADERS.as, as);
    for (const [header, value] of Object.entries(extra)) headers.set(header, value);
    const stub = this.#namespace.get(this.#namespace.idFromName(name));
    return stub.fetch(new Request(request.clone(), { headers }));
  }
}

/** The key of `POST /v1/jobs` from its JSON body; null when it has none (the shard refuses it). */
async function registeredKey(request: Request): Promise<JobKey | null> {
  try {
    const body = (await request.clone().json()) as { provider?: unknown; id?: unknown };
    // An id outside the rule goes to the home shard, which refuses it (400) like any bad body;
    // placing it would URI-encode half a surrogate pair, which throws.
    return typeof body.provider === "string" && isValidId(body.id)
      ? { provider: body.provider, id: body.id }
      : null;
  } catch {
    return null;
  }
}

/** `<prefix>:provider/:id[/events|/observations|/replay-effects]`; ids may hold `/` or `%2F`. */
function jobKeyOfPath(path: string, prefix: string): JobKey | null {
  const rest = path.slice(prefix.length);
  const slash = rest.indexOf("/");
  if (slash <= 0) return null;
  const encodedId = rest.slice(slash + 1);
  // As the app splits it (job-routes.ts `jobPath`): the first suffix that matches, once.
  const suffix = JOB_SUFFIXES.find((s) => encodedId.endsWith(s));
  const id = suffix ? encodedId.slice(0, -suffix.length) : encodedId;
  try {
    const key = { provider: decodeURIComponent(rest.slice(0, slash)), id: decodeURIComponent(id) };
    return isValidId(key.id) ? key : null;
  } catch {
    return null;
  }
}
