import { FinalityError } from "../core/errors.js";
import { problemResponse, toProblem } from "../http/problem.js";
import type { SendToShard } from "./shard-lists.js";

type IntentItem = Record<string, unknown> & { key: string; createdAt: string };

/**
 * `GET /v1/intents` over every object: each answers its newest `limit` (with the query's filters),
 * one item per key is kept (the home's, where every intent is recorded; an attached intent's copy
 * beside its job on a shard, or an intent an older version recorded on a job shard, otherwise),
 * and the newest `limit` are answered, in the store's order (created first, then key). Exact: an
 * intent among the newest `limit` distinct keys has fewer than `limit` newer rows on any object
 * (each row there is another key), so every object's page holds it.
 */
export async function mergedIntents(
  request: Request,
  shards: readonly string[],
  home: string,
  send: SendToShard,
): Promise<Response> {
  const answers = await Promise.all(
    shards.map(async (name) => ({ name, response: await send(name, request) })),
  );
  const refused = answers.find((a) => a.response.status !== 200);
  if (refused !== undefined) {
    // A refusal of the query (400, 401) is the same from every object: pass the first one on.
    if (refused.response.status < 500) return refused.response;
    return problemResponse(
      toProblem(
        new FinalityError("store-unavailable", `ledger shard ${refused.name} did not answer the list`, {
          retryAfterMs: 1_000,
        }),
      ).problem,
    );
  }
  const byKey = new Map<string, IntentItem>();
  const limit = Number(new URL(request.url).searchParams.get("limit") ?? 50);
  // The home first: its record wins over any copy.
  const ordered = [...answers].sort((a, b) => Number(b.name === home) - Number(a.name === home));
  for (const { response } of ordered) {
    const page = (await response.json()) as { items: IntentItem[] };
    for (const item of page.items) if (!byKey.has(item.key)) byKey.set(item.key, item);
  }
  const items = [...byKey.values()]
    .sort((a, b) =>
      a.createdAt === b.createdAt ? (a.key < b.key ? -1 : 1) : a.createdAt > b.createdAt ? -1 : 1,
    )
    .slice(0, limit);
  return Response.json({ items });
}
