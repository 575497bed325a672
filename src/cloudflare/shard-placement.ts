import { type ErrorCode, FinalityError } from "../core/errors.js";
import type { AttachedBy, Intent } from "../core/intent-model.js";
import type { JobKey } from "../core/model.js";
import type { IntentJobPlacement } from "../engine/intent-api.js";
import { type AttachOutcome, attachIntentCopyInTx } from "../engine/intents.js";
import type { WorkersLedger } from "../host/workers/ledger-from-config.js";
import {
  type AdoptOutcome,
  adoptPlacedInTx,
  type ListingPlacement,
  type PlacedListing,
} from "../providers/discovery-sweep.js";
import { shardNameOf } from "./shard-layout.js";
import type { ShardRouter } from "./shard-router.js";

/**
 * Where a sharded Worker's intents meet their jobs. Every intent is recorded on the runs home (the
 * object `ledger`, which no reshard moves); its job lives on the job's shard. The home sends the
 * two writes that concern a job to the job's shard over these internal paths (the Worker refuses
 * `/__finality/` from outside; they pass the shard fence as any request about a job does):
 * attaching an intent (a copy of it attached there, the job registered with its kind and
 * metadata), and the jobs a discovery sweep listed.
 */
const ATTACH_INTENT_PATH = "/__finality/attach-intent";
const ADOPT_LISTED_PATH = "/__finality/adopt-listed";

const INTERNAL = "https://finality.internal";

interface AttachBody {
  intent: Intent;
  id: string;
  by: AttachedBy;
}

interface AdoptBody {
  provider: string;
  items: PlacedListing[];
}

/** The runs home's side: the intent API's and the discovery sweeps' placement of jobs. */
export function shardPlacement(
  router: ShardRouter,
  /** True when `name` is this object itself (its own writes stay local). */
  isSelf: (name: string) => boolean,
): { intents: IntentJobPlacement; listings: ListingPlacement } {
  /** The object a key's request goes to without asking, or null when a reshard makes that a question. */
  const fixedHome = (key: JobKey): string | null => {
    const { current, previous } = router.layouts;
    return previous === null ? shardNameOf(key, current) : null;
  };
  return {
    intents: {
      async attachWhereTheJobLives(intent, id, by) {
        const key = { provider: intent.provider, id };
        const home = fixedHome(key);
        if (home !== null && isSelf(home)) return null;
        const body: AttachBody = { intent, id, by };
        const response = await router.sendToJob(key, post(ATTACH_INTENT_PATH, body));
        return (await answerOf(response)) as AttachOutcome;
      },
    },
    listings: {
      async adopt(provider, items) {
        const outcomes: AdoptOutcome[] = new Array(items.length);
        // One request per shard for its part of the page; during a reshard one per job, each
        // asking the draining layout first, as every request about a job does.
        const groups = new Map<string, number[]>();
        const single: number[] = [];
        for (const [i, item] of items.entries()) {
          const home = fixedHome({ provider, id: item.listed.id });
          if (home === null) single.push(i);
          else groups.set(home, [...(groups.get(home) ?? []), i]);
        }
        const part = (indexes: number[]): AdoptBody => ({
          provider,
          items: indexes.map((i) => items[i] as PlacedListing),
        });
        const store = (indexes: number[], answer: unknown) => {
          const answered = answer as AdoptOutcome[];
          for (const [n, i] of indexes.entries()) outcomes[i] = answered[n] as AdoptOutcome;
        };
        await Promise.all([
          ...[...groups].map(async ([name, indexes]) =>
            store(indexes, await answerOf(await router.sendTo(name, post(ADOPT_LISTED_PATH, part(indexes))))),
          ),
          ...single.map(async (i) => {
            const key = { provider, id: (items[i] as PlacedListing).listed.id };
            store([i], await answerOf(await router.sendToJob(key, post(ADOPT_LISTED_PATH, part([i])))));
          }),
        ]);
        return outcomes;
      },
    },
  };
}

/** The job shard's side of the two internal paths; null for any other path. */
export async function answerPlacedWrite(ledger: WorkersLedger, request: Request): Promise<Response | null> {
  const path = new URL(request.url).pathname;
  if (path !== ATTACH_INTENT_PATH && path !== ADOPT_LISTED_PATH) return null;
  if (request.method !== "POST") return new Response(null, { status: 405 });
  const engine = ledger.finality;
  const now = engine.clock.now();
  if (path === ATTACH_INTENT_PATH) {
    const { intent, id, by } = (await request.json()) as AttachBody;
    const ctx = engine.contextFor(intent.provider, now);
    const outcome = await engine.store.transaction((tx) => attachIntentCopyInTx(tx, intent, id, by, ctx), {
      lockOrder: `${intent.provider}\u0000${id}\u0000`,
    });
    if (outcome.effects.length > 0) engine.announceEffects();
    return Response.json(outcome);
  }
  const { provider, items } = (await request.json()) as AdoptBody;
  const ctx = engine.contextFor(provider, now);
  const outcomes = await engine.store.transaction(async (tx) => {
    const out: AdoptOutcome[] = [];
    for (const item of items) out.push(await adoptPlacedInTx(tx, provider, item, ctx));
    return out;
  });
  // A job listed settled, or an attach that made a settled job's effects due: the alarm sends them.
  if (outcomes.some((o) => o.outcome !== "known")) engine.announceEffects();
  return Response.json(outcomes);
}

function post(path: string, body: unknown): Request {
  return new Request(`${INTERNAL}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** The JSON of a 200, or the shard's problem thrown as the same error (the caller answers it). */
async function answerOf(response: Response): Promise<unknown> {
  const body = (await response.json().catch(() => null)) as Record<string, unknown> | null;
  if (response.ok) return body;
  const code = (typeof body?.code === "string" ? body.code : "store-unavailable") as ErrorCode;
  const detail =
    typeof body?.detail === "string" ? body.detail : `a ledger shard answered ${response.status}`;
  const details = Object.fromEntries(
    Object.entries(body ?? {}).filter(([k]) => ["field", "reason", "provider", "id"].includes(k)),
  );
  throw new FinalityError(code, detail, {
    details,
    ...(typeof body?.retryAfterSeconds === "number" ? { retryAfterMs: body.retryAfterSeconds * 1000 } : {}),
  });
}
