import { describe, expect, it } from "vitest";
import { decodeMergedCursor, encodeMergedCursor } from "../../src/cloudflare/merged-settlement-cursor.js";
import { mergedSettlements } from "../../src/cloudflare/shard-settlements.js";
import { settlementCursor, settlementNumber } from "../../src/store/settlement-feed.js";

// The merge of shard-settlements.ts with shards faked in memory (workerd covers the real thing in
// worker-shard-settlements.test.ts): what no Worker in workerd reaches on its own.

/** Shards whose feeds hold `count` settlements each, settled at the times given. */
function fakeShards(feeds: Record<string, number[]>) {
  return async (name: string, request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const after = settlementNumber(url.searchParams.get("after") ?? undefined);
    const limit = Number(url.searchParams.get("limit"));
    const items = (feeds[name] ?? [])
      .map((at, i) => ({
        cursor: settlementCursor(i + 1),
        id: `${name}-${i + 1}`,
        settledAt: new Date(at).toISOString(),
      }))
      .slice(after, after + limit);
    return Response.json({ items, cursor: items.at(-1)?.cursor ?? null });
  };
}

const read = async (shards: string[], send: ReturnType<typeof fakeShards>, query: string) =>
  (await (
    await mergedSettlements(new Request(`https://w.example/v1/settlements${query}`), shards, send)
  ).json()) as {
    items: { id: string; cursor: string }[];
    cursor: string | null;
  };

describe("the merged settlement feed", () => {
  it("keeps the positions of shards this Worker does not read (another layout's Worker reads them)", async () => {
    const shards = ["ledger-0-of-2", "ledger-1-of-2"];
    const send = fakeShards({ "ledger-0-of-2": [1, 3], "ledger-1-of-2": [2] });
    const other = new Map([["ledger-3-of-4", 7]]);
    const page = await read(shards, send, `?after=${encodeMergedCursor(other)}&limit=2`);
    expect(page.items.map((s) => s.id)).toEqual(["ledger-0-of-2-1", "ledger-1-of-2-1"]);
    expect(decodeMergedCursor(page.cursor, "after")).toEqual(
      new Map([
        ["ledger-0-of-2", 1],
        ["ledger-1-of-2", 1],
        ["ledger-3-of-4", 7],
      ]),
    );
  });

  it("interleaves by settled time, then shard order, and resumes each shard after what it sent", async () => {
    const shards = ["ledger-0-of-2", "ledger-1-of-2"];
    const send = fakeShards({ "ledger-0-of-2": [5, 5, 9], "ledger-1-of-2": [5, 6] });
    const first = await read(shards, send, "?limit=3");
    expect(first.items.map((s) => s.id)).toEqual(["ledger-0-of-2-1", "ledger-0-of-2-2", "ledger-1-of-2-1"]);
    const second = await read(shards, send, `?after=${first.cursor}&limit=3`);
    expect(second.items.map((s) => s.id)).toEqual(["ledger-1-of-2-2", "ledger-0-of-2-3"]);
  });
});
