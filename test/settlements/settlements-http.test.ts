import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createApp } from "../../src/app/create-app.js";
import { parseConfig } from "../../src/config/load-config.js";
import { createFinality } from "../../src/engine/create-finality.js";
import type { Finality } from "../../src/engine/finality.js";
import { ledgerOptionsFromConfig } from "../../src/host/from-config.js";
import { createWebhookReceivers } from "../../src/providers/node-providers.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { engineOf } from "../helpers/engine.js";
import { ACME, webhookInit } from "../http/helpers/in-process.js";
import { SECRET, signWith } from "../http/helpers/webhooks.js";
import { sseReader } from "./sse-client.js";

// The settlement feed over HTTP on a SQLite ledger: pages, the long poll, SSE with
// Last-Event-ID, refusals, and the API token. Requests go through app.request (no port).
// The feed's fallback poll is an hour: a long poll or a stream here answers because the commit
// woke it, or not before the test's timeout (with the default 1 s poll they passed without wake-ups).

const HOUR = 3_600_000;

const TOKEN = "t0ken-for-the-settlement-tests";
type App = ReturnType<typeof createApp>;
let finality: Finality;
let app: App;
let shutdown: AbortController;

async function open(server: Record<string, unknown> = {}) {
  const config = parseConfig({ providers: { acme: ACME }, server }, {}, { db: ":memory:" });
  const store = createSqliteStore({ path: ":memory:", settlementPollMs: HOUR });
  finality = createFinality({ store, ...ledgerOptionsFromConfig(config) });
  const receivers = createWebhookReceivers(config.providers, () => engineOf(finality).clock.now());
  shutdown = new AbortController();
  app = createApp({ finality, config, receivers, settlementHeartbeatMs: 40, shutdown: shutdown.signal });
}
beforeEach(async () => open());
afterEach(async () => {
  await finality.close();
});

let deliveries = 0;
async function settle(id: string, state = "succeeded", kind?: string) {
  const body = JSON.stringify({ jobId: id, state, kind, result: { id } });
  const response = await app.request("/webhooks/acme", webhookInit(body, signed(body)));
  expect(response.status).toBe(200);
}
const signed = (body: string) => signWith(SECRET, body, { id: `msg-${++deliveries}` });

interface Body {
  items: {
    cursor: string;
    provider: string;
    id: string;
    state: string;
    settledAt: string;
    settledBy: string;
    job: { id: string; result: unknown } | null;
  }[];
  cursor: string | null;
}
const get = async (query: string, init?: RequestInit) => {
  const response = await app.request(`/v1/settlements${query}`, init);
  return {
    status: response.status,
    type: response.headers.get("content-type"),
    body: (await response.json()) as Body & Record<string, unknown>,
  };
};

describe("GET /v1/settlements", () => {
  it("answers the settlements in commit order with a cursor to go on from", async () => {
    expect((await get("")).body).toEqual({ items: [], cursor: null });
    await settle("a");
    const running = JSON.stringify({ jobId: "b", state: "running" });
    await app.request("/webhooks/acme", webhookInit(running, signed(running)));
    await settle("c", "failed");
    await settle("b");
    const first = await get("?limit=2");
    expect(first.status).toBe(200);
    expect(first.body.items.map((s) => `${s.id}:${s.state}`)).toEqual(["a:succeeded", "c:failed"]);
    expect(first.body.items[0]).toMatchObject({
      provider: "acme",
      settledBy: "webhook",
      job: { id: "a", result: { id: "a" } },
    });
    expect(Date.parse(first.body.items[0]?.settledAt ?? "")).not.toBeNaN();
    expect(first.body.cursor).toBe(first.body.items[1]?.cursor);
    const rest = await get(`?after=${first.body.cursor}`);
    expect(rest.body.items.map((s) => s.id)).toEqual(["b"]);
    const none = await get(`?after=${rest.body.cursor}`);
    expect(none.body).toEqual({ items: [], cursor: rest.body.cursor });
    expect((await get("?provider=other")).body.items).toEqual([]);
  });

  it("refuses bad parameters with problem+json 400 and names the field", async () => {
    for (const [query, field] of [
      ["?limit=0", "limit"],
      ["?limit=1001", "limit"],
      ["?limit=ten", "limit"],
      ["?wait=61", "wait"],
      ["?wait=-1", "wait"],
      ["?after=not-a-cursor", "after"],
      ["?colour=red", "colour"],
    ] as const) {
      const answer = await get(query);
      expect(answer.status, query).toBe(400);
      expect(answer.type, query).toContain("application/problem+json");
      expect(answer.body, query).toMatchObject({ code: "invalid-request", field });
    }
  });

  it("a long poll answers as soon as a settlement commits", async () => {
    const empty = await get("");
    // Resolved when the waiting request has read and found nothing: the commit comes after that.
    const store = engineOf(finality).store;
    const read = store.readSettlements.bind(store);
    let emptyRead: () => void = () => {};
    const readEmpty = new Promise<void>((resolve) => {
      emptyRead = resolve;
    });
    store.readSettlements = async (query) => {
      const page = await read(query);
      if (page.items.length === 0) emptyRead();
      return page;
    };
    const started = performance.now();
    const polling = get(`?wait=60${empty.body.cursor ? `&after=${empty.body.cursor}` : ""}`);
    await readEmpty;
    await settle("late");
    const answer = await polling;
    expect(answer.body.items.map((s) => s.id)).toEqual(["late"]);
    expect(performance.now() - started).toBeLessThan(30_000);
  });

  it("a long poll with nothing new answers empty at its deadline, keeping the cursor", async () => {
    await settle("only");
    const { body } = await get("");
    const answer = await get(`?after=${body.cursor}&wait=1`);
    expect(answer.body).toEqual({ items: [], cursor: body.cursor });
  });

  it("asks for the API token like every /v1 route", async () => {
    await finality.close();
    await open({ apiToken: TOKEN });
    expect((await app.request("/v1/settlements")).status).toBe(401);
    expect((await app.request("/v1/settlements/stream")).status).toBe(401);
    const allowed = await get("", { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(allowed.status).toBe(200);
  });
});

describe("GET /v1/settlements/stream (SSE)", () => {
  const stream = async (query = "", headers: Record<string, string> = {}) => {
    const response = await app.request(`/v1/settlements/stream${query}`, { headers });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    if (!response.body) throw new Error("no body");
    return sseReader(response.body);
  };

  it("sends each settlement with its cursor as id, then new ones as they commit, with heartbeats", async () => {
    await settle("one");
    const events = await stream();
    const first = await events.next();
    expect(first).toMatchObject({ event: "settlement" });
    const data = JSON.parse(first?.data ?? "{}");
    expect(data).toMatchObject({ id: "one", cursor: first?.id, state: "succeeded" });
    await settle("two");
    expect(JSON.parse((await events.next())?.data ?? "{}").id).toBe("two");
    await events.untilComment("heartbeat");
    await events.cancel();
  });

  it("resumes after Last-Event-ID (which wins over after): nothing missed, nothing twice", async () => {
    for (const id of ["r1", "r2", "r3"]) await settle(id);
    const first = await stream();
    const seen = [await first.next(), await first.next()];
    await first.cancel();
    await settle("r4");
    // Both given, as EventSource does on a reconnect to the URL it was opened with: the header wins.
    const resumed = await stream(`?after=${seen[0]?.id}`, { "last-event-id": seen[1]?.id ?? "" });
    const next = [await resumed.next(), await resumed.next()];
    expect(next.map((e) => JSON.parse(e?.data ?? "{}").id)).toEqual(["r3", "r4"]);
    await resumed.cancel();
    const fromAfter = await stream(`?after=${seen[0]?.id}`);
    expect(JSON.parse((await fromAfter.next())?.data ?? "{}").id).toBe("r2");
    await fromAfter.cancel();
  });

  it("refuses a bad Last-Event-ID or filter with 400 before streaming", async () => {
    const bad = await app.request("/v1/settlements/stream", { headers: { "last-event-id": "nope" } });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ field: "Last-Event-ID" });
    const unknown = await app.request("/v1/settlements/stream?limit=5");
    expect(unknown.status).toBe(400);
  });
});

describe("when the server stops", () => {
  it("a long poll answers at once and an SSE stream ends, so closing does not wait for them", async () => {
    await settle("before-stop");
    const { body } = await get("");
    const polling = get(`?after=${body.cursor}&wait=60`);
    const response = await app.request("/v1/settlements/stream");
    if (!response.body) throw new Error("no body");
    const events = sseReader(response.body);
    expect(JSON.parse((await events.next())?.data ?? "{}").id).toBe("before-stop");
    shutdown.abort();
    expect((await polling).body).toEqual({ items: [], cursor: body.cursor });
    expect(await events.next()).toBeNull();
  });
});
