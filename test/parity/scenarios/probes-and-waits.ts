import { expect } from "vitest";
import { SECRET, signWith } from "../../http/helpers/webhooks.js";
import { API_TOKEN, type Running } from "../deployments.js";
import { json, type Scenario } from "../scenario.js";

const PROVIDER = "wait-acme";
/** Far beyond what a woken wait takes: an answer this late came from the deadline, not the commit. */
const WAIT_SECONDS = 20;

/** A request to one chosen URL (replica), with the API token. */
function at(url: string, path: string, init: RequestInit = {}) {
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${API_TOKEN}`);
  return fetch(`${url}${path}`, { ...init, headers });
}

/** A signed webhook for `id`, sent to `url`. */
async function webhook(url: string, id: string, state: string) {
  const body = JSON.stringify({ jobId: id, state });
  const response = await fetch(`${url}/webhooks/${PROVIDER}`, {
    method: "POST",
    headers: signWith(SECRET, body),
    body,
  });
  await response.arrayBuffer();
  return response.status;
}

/** Another URL than `url` when there is one: a commit on another replica (PostgreSQL). */
const other = (running: Running) => running.urls[running.urls.length - 1] as string;

/** The first `event: settlement` of an SSE stream, as { id, data }. */
async function firstSettlementEvent(response: Response): Promise<{ id: string; data: { id: string } }> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended before a settlement: ${text}`);
      text += decoder.decode(value, { stream: true });
      for (const block of text.split("\n\n").slice(0, -1)) {
        const lines = block.split("\n");
        if (!lines.includes("event: settlement")) continue;
        const field = (name: string) =>
          lines.find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2) ?? "";
        return { id: field("id"), data: JSON.parse(field("data")) };
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/**
 * /healthz and /readyz on every URL; the settlement long poll (`?wait=`), the SSE stream and one
 * job's wait (`GET /v1/jobs/{provider}/{id}?wait=`), each held on one URL and woken by a commit
 * sent to another (another replica on PostgreSQL; on Workers the job's own shard), well before
 * its deadline; an unknown job's wait is 404 at once and a bad `wait` is 400 problem+json.
 */
export const probesAndWaits: Scenario = {
  name: "probes-and-waits",
  config: () => ({ providers: { [PROVIDER]: { type: "generic", webhook: { secrets: [SECRET] } } } }),
  async run(running) {
    for (const url of running.urls) {
      expect((await fetch(`${url}/healthz`)).status, url).toBe(200);
      expect((await fetch(`${url}/readyz`)).status, url).toBe(200);
    }
    const first = running.urls[0] as string;

    // The settlement long poll: nothing of this provider yet, so it waits until the commit.
    const poll = (async () => {
      const started = performance.now();
      const response = await at(first, `/v1/settlements?provider=${PROVIDER}&wait=${WAIT_SECONDS}`);
      const body = (await response.json()) as { items: { id: string; state: string }[] };
      return { status: response.status, body, ms: performance.now() - started };
    })();
    // The SSE stream from the start of this provider's feed.
    const stream = await at(first, `/v1/settlements/stream?provider=${PROVIDER}`);
    expect(stream.status).toBe(200);
    expect(stream.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const event = firstSettlementEvent(stream);
    expect(await webhook(other(running), "poll-1", "succeeded")).toBe(200);
    const polled = await poll;
    expect(polled.status).toBe(200);
    expect(polled.body.items.map((i) => [i.id, i.state])).toEqual([["poll-1", "succeeded"]]);
    expect(polled.ms).toBeLessThan(WAIT_SECONDS * 1000 - 5000);
    const streamed = await event;
    expect(streamed.data.id).toBe("poll-1");
    expect(streamed.id).not.toBe("");

    // One job's wait: running, then settled on another URL while the wait is held.
    expect(await webhook(first, "await-1", "running")).toBe(200);
    const started = performance.now();
    const waited = at(first, `/v1/jobs/${PROVIDER}/await-1?wait=${WAIT_SECONDS}`);
    expect(await webhook(other(running), "await-1", "failed")).toBe(200);
    const answer = await waited;
    const job = (await answer.json()) as { state: string };
    expect(answer.status).toBe(200);
    expect(answer.headers.get("finality-settled")).toBe("true");
    expect(job.state).toBe("failed");
    expect(performance.now() - started).toBeLessThan(WAIT_SECONDS * 1000 - 5000);

    // Settled already: at once. Unknown: 404 at once. A bad wait: 400 naming the field.
    const settled = await at(first, `/v1/jobs/${PROVIDER}/await-1?wait=${WAIT_SECONDS}`);
    expect(settled.headers.get("finality-settled")).toBe("true");
    await settled.arrayBuffer();
    const unknown = await json(running, `/v1/jobs/${PROVIDER}/nobody?wait=${WAIT_SECONDS}`);
    expect(unknown.status).toBe(404);
    const bad = await json<{ field?: string }>(running, `/v1/jobs/${PROVIDER}/await-1?wait=61`);
    expect(bad.status).toBe(400);
    expect(bad.type).toMatch(/^application\/problem\+json/);
    expect(bad.body.field).toBe("wait");
  },
};
