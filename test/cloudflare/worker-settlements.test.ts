import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeCursor } from "../../src/store/json-column.js";
import { SECRET, signWith } from "../http/helpers/webhooks.js";
import { sseReader } from "../settlements/sse-client.js";
import { startWorkerLedger, type WorkerLedger } from "./helpers/worker-ledger.js";

// The settlement feed on Workers: the same routes, answered by the Durable Object's store in
// workerd (Miniflare): a page, a long poll woken by a webhook's commit, and the SSE stream.

let worker: WorkerLedger;
beforeAll(async () => {
  worker = await startWorkerLedger({
    providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } },
  });
}, 120_000);
afterAll(async () => {
  await worker?.dispose();
});

let sent = 0;
async function settle(id: string): Promise<void> {
  const body = JSON.stringify({ jobId: id, state: "succeeded", result: { id } });
  const headers = signWith(SECRET, body, { id: `worker-msg-${++sent}` });
  const response = await worker.fetch("/webhooks/acme", { method: "POST", headers, body });
  expect(response.status).toBe(200);
  await response.arrayBuffer();
}

interface Page {
  items: { cursor: string; id: string; state: string; job: { id: string } | null }[];
  cursor: string | null;
}
const page = async (query: string) => {
  const response = await worker.fetch(`/v1/settlements${query}`);
  expect(response.status).toBe(200);
  return (await response.json()) as Page;
};

describe("the settlement feed in workerd", () => {
  it("pages, long-polls and streams settlements in commit order", async () => {
    expect(await page("")).toEqual({ items: [], cursor: null });
    await settle("w1");
    await settle("w2");
    const first = await page("");
    expect(first.items.map((s) => s.id)).toEqual(["w1", "w2"]);
    expect(first.items[0]?.job).toMatchObject({ id: "w1" });

    // The long poll is answered by the commit, not by its 60 s deadline (the test would time out).
    const polling = page(`?after=${first.cursor}&wait=60`);
    await settle("w3");
    expect((await polling).items.map((s) => s.id)).toEqual(["w3"]);

    const response = await worker.fetch("/v1/settlements/stream", {
      headers: { "last-event-id": first.items[0]?.cursor ?? "" },
    });
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    if (!response.body) throw new Error("no body");
    const events = sseReader(response.body);
    const seen = [await events.next(), await events.next()];
    expect(seen.map((e) => JSON.parse(e?.data ?? "{}").id)).toEqual(["w2", "w3"]);
    await settle("w4");
    const live = await events.next();
    expect(JSON.parse(live?.data ?? "{}")).toMatchObject({ id: "w4", cursor: live?.id });
    await events.cancel();

    // A cursor past the ledger's newest settlement (only a forged one can be) is refused, not
    // read as "nothing yet": the page, the long poll and the stream (issue #32).
    const past = encodeCursor(1_000_000) as string;
    for (const path of ["/v1/settlements?after=", "/v1/settlements?wait=1&after="]) {
      const refused = await worker.fetch(`${path}${encodeURIComponent(past)}`);
      expect(refused.status, path).toBe(400);
      expect(refused.headers.get("content-type")).toContain("application/problem+json");
      await refused.arrayBuffer();
    }
    const pastStream = await worker.fetch("/v1/settlements/stream", { headers: { "last-event-id": past } });
    expect(pastStream.status).toBe(400);
    expect(((await pastStream.json()) as { field?: string }).field).toBe("Last-Event-ID");
    // Unauthenticated, the same cursor is a 401: the refusal says nothing of the feed's length.
    const anonymous = await worker.fetch(`/v1/settlements/stream?after=${past}`, {
      headers: { authorization: "Bearer wrong" },
    });
    expect(anonymous.status).toBe(401);
    await anonymous.arrayBuffer();

    const bad = await worker.fetch("/v1/settlements?wait=61");
    expect(bad.status).toBe(400);
    expect(bad.headers.get("content-type")).toContain("application/problem+json");
    await bad.arrayBuffer();
  }, 120_000);
});
