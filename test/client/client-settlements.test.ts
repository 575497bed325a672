import { writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFinalityClient, FinalityClientError } from "../../src/client/index.js";
import { settlementPageSchema } from "../../src/http/settlement-api-schemas.js";
import { type Service, startService, tempDir } from "../http/helpers/service.js";
import { SECRET, sendWebhook } from "../http/helpers/webhooks.js";

// `finality/client`'s settlement methods against a real `finality serve` child: jobs settled by
// signed webhooks are read with `listSettlements` (pages, a cursor, a long poll) and followed with
// `followSettlements`, resumed from a cursor without repeats or gaps, and stopped by an AbortSignal.

const API_TOKEN = "client-settlements-api-token-0123456789";

let service: Service;
const dir = tempDir();

beforeAll(async () => {
  const configPath = dir.file("finality.config.json");
  writeFileSync(
    configPath,
    JSON.stringify({
      server: { apiToken: API_TOKEN },
      providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } },
      reconcile: { graceSeconds: 3600 },
    }),
  );
  service = await startService({ db: dir.file("ledger.db"), args: ["--config", configPath] });
});

afterAll(async () => {
  await service?.stop();
  dir.cleanup();
});

const api = (options: { fetch?: typeof fetch } = {}) =>
  createFinalityClient({ baseUrl: service.url, token: API_TOKEN, ...options });

/** Registers `feed/<n>` and settles it by a signed webhook. */
async function settle(n: number): Promise<void> {
  await api().registerJob({ provider: "acme", id: `feed/${n}`, kind: "render" });
  const sent = await sendWebhook(service.url, "acme", { jobId: `feed/${n}`, state: "succeeded", seq: 1 });
  expect(sent.body).toMatchObject({ outcome: "applied", state: "succeeded" });
}

describe("finality/client: the settlement feed against finality serve", () => {
  it("lists settlements in commit order, resumes after a cursor, long polls, follows and stops", async () => {
    const client = api();
    for (const n of [1, 2, 3]) await settle(n);

    const all = settlementPageSchema.parse(await client.listSettlements({ provider: "acme", limit: 100 }));
    expect(all.items.map((item) => item.id)).toEqual(["feed/1", "feed/2", "feed/3"]);
    expect(all.items.every((item) => item.settledBy === "webhook" && item.job?.state === "succeeded")).toBe(
      true,
    );
    expect(all.cursor).toBe(all.items[2]?.cursor);
    const first = all.items[0]?.cursor;
    const rest = await client.listSettlements({ after: first, limit: 1 });
    expect(rest.items.map((item) => item.id)).toEqual(["feed/2"]);
    const rest2 = await client.listSettlements({ after: rest.cursor ?? undefined });
    expect(rest2.items.map((item) => item.id)).toEqual(["feed/3"]);

    // A long poll after the end answers with the next settlement (the timeout waits `wait` more).
    const polled = client.listSettlements({ after: all.cursor ?? undefined, wait: 30 });
    await settle(4);
    expect((await polled).items.map((item) => item.id)).toEqual(["feed/4"]);

    // Following from feed/2's cursor: feed/3, feed/4, then feed/5 as it commits; nothing twice.
    const seen: string[] = [];
    let lastCursor: string | undefined;
    for await (const settlement of client.followSettlements({
      after: rest.cursor ?? undefined,
      waitSeconds: 30,
    })) {
      seen.push(settlement.id);
      lastCursor = settlement.cursor;
      if (settlement.id === "feed/4") await settle(5);
      if (settlement.id === "feed/5") break;
    }
    expect(seen).toEqual(["feed/3", "feed/4", "feed/5"]);

    // Resumed from the last cursor it saw, with feed/6 committed meanwhile: feed/6 only. The
    // signal aborts the long poll that follows it, in flight (60 s): the iteration just ends.
    await settle(6);
    const stop = new AbortController();
    const pollsAfter6: string[] = [];
    const watching = api({
      fetch: (input, init) => {
        const url = String(input);
        const answer = fetch(input, init);
        if (pollsAfter6.length > 0) setImmediate(() => stop.abort());
        pollsAfter6.push(url);
        return answer;
      },
    });
    const resumed: string[] = [];
    const started = Date.now();
    for await (const settlement of watching.followSettlements({
      after: lastCursor,
      provider: "acme",
      waitSeconds: 60,
      signal: stop.signal,
    }))
      resumed.push(settlement.id);
    expect(resumed).toEqual(["feed/6"]);
    expect(pollsAfter6).toHaveLength(2);
    expect(pollsAfter6[1]).toContain("wait=60");
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it("`settlements()` reads the feed as the library's `finality.settlements({ after, signal })` does", async () => {
    const client = api();
    const all = await client.listSettlements({ provider: "acme", limit: 1000 });
    const [secondLast, last] = all.items.slice(-2);
    const stop = new AbortController();
    const seen: string[] = [];
    // After the second-to-last cursor: the last settlement, then the abort ends the long poll quietly.
    for await (const settlement of client.settlements({ after: secondLast?.cursor, signal: stop.signal })) {
      seen.push(settlement.id);
      stop.abort();
    }
    expect(seen).toEqual([last?.id]);
  });

  it("a cursor the server did not give is a 400 naming `after`", async () => {
    const error = await api()
      .listSettlements({ after: "not-a-cursor" })
      .then(
        () => null,
        (thrown: unknown) => thrown,
      );
    expect(error).toBeInstanceOf(FinalityClientError);
    expect(error).toMatchObject({ status: 400, problem: { code: "invalid-request", field: "after" } });
  });
});
