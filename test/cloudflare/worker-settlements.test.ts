import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

    const bad = await worker.fetch("/v1/settlements?wait=61");
    expect(bad.status).toBe(400);
    expect(bad.headers.get("content-type")).toContain("application/problem+json");
    await bad.arrayBuffer();
  }, 120_000);
});
