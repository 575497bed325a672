import { expect } from "vitest";
import { SECRET, signWith } from "../../http/helpers/webhooks.js";
import { json, post, SCALE, type Scenario } from "../scenario.js";

interface Page {
  items: {
    cursor: string;
    provider: string;
    id: string;
    kind: string | null;
    amendment: boolean;
    state: string;
  }[];
  cursor: string | null;
}

const webhook = (running: Parameters<Scenario["run"]>[0], provider: string, id: string, state: string) => {
  const body = JSON.stringify({ jobId: id, state });
  return running.fetch(`/webhooks/${provider}`, { method: "POST", headers: signWith(SECRET, body), body });
};

/**
 * The settlement feed: every settled job once, in pages followed by cursor, filtered by provider
 * (another instance's settlements never show), and resumed from a cursor in the middle: the rest,
 * nothing twice, nothing missed, whichever URL answers each page. A job that settles before its
 * kind is known: a reader filtered by that kind is given it once, marked as the kind's amendment;
 * the provider's reader saw it once, kind-less.
 */
export const settlementFeed: Scenario = {
  name: "settlement-feed",
  config: () => ({
    providers: {
      "feed-a": { type: "generic", webhook: { secrets: [SECRET] } },
      "feed-b": { type: "generic", webhook: { secrets: [SECRET] } },
    },
  }),
  async run(running) {
    const jobs = 6 * SCALE;
    for (let i = 0; i < jobs; i++) {
      for (const provider of ["feed-a", "feed-b"]) {
        expect((await webhook(running, provider, `job-${i}`, "running")).status).toBe(200);
        expect((await webhook(running, provider, `job-${i}`, "succeeded")).status).toBe(200);
        // A second terminal webhook is no second settlement.
        expect((await webhook(running, provider, `job-${i}`, "succeeded")).status).toBe(200);
      }
    }
    expect((await webhook(running, "feed-a", "open-1", "running")).status).toBe(200);

    const read = async (after: string | null, limit: number) => {
      const seen: Page["items"] = [];
      let cursor = after;
      for (;;) {
        const query = `provider=feed-a&limit=${limit}${cursor === null ? "" : `&after=${encodeURIComponent(cursor)}`}`;
        const { status, body } = await json<Page>(running, `/v1/settlements?${query}`);
        expect(status).toBe(200);
        if (body.items.length === 0) return { seen, cursor };
        seen.push(...body.items);
        cursor = body.cursor;
      }
    };
    const all = await read(null, 2);
    expect(all.seen.every((s) => s.provider === "feed-a")).toBe(true);
    expect(all.seen.map((s) => s.id).sort()).toEqual(
      Array.from({ length: jobs }, (_, i) => `job-${i}`).sort(),
    );
    expect(all.seen.every((s) => s.state === "succeeded")).toBe(true);

    const middle = all.seen[Math.floor(jobs / 2) - 1] as Page["items"][0];
    const rest = await read(middle.cursor, 3);
    expect(rest.seen.map((s) => s.id)).toEqual(all.seen.slice(Math.floor(jobs / 2)).map((s) => s.id));
    // Resumed at the end: nothing new until something settles, then exactly that.
    expect((await read(all.cursor, 5)).seen).toEqual([]);
    expect((await webhook(running, "feed-a", "open-1", "failed")).status).toBe(200);
    expect((await read(all.cursor, 5)).seen.map((s) => [s.id, s.state])).toEqual([["open-1", "failed"]]);

    expect((await webhook(running, "feed-b", "late-kind", "succeeded")).status).toBe(200);
    expect(
      (await post(running, "/v1/jobs", { provider: "feed-b", id: "late-kind", kind: "render" })).status,
    ).toBe(200);
    const renders = await json<Page>(running, "/v1/settlements?kind=render");
    expect(
      renders.body.items.map(({ id, kind, amendment, state }) => ({ id, kind, amendment, state })),
    ).toEqual([{ id: "late-kind", kind: "render", amendment: true, state: "succeeded" }]);
    const feedB = await json<Page>(running, "/v1/settlements?provider=feed-b&limit=1000");
    expect(feedB.body.items.filter((s) => s.id === "late-kind")).toMatchObject([
      { kind: null, amendment: false },
    ]);
    expect(feedB.body.items.every((s) => !s.amendment)).toBe(true);

    const bad = await running.fetch("/v1/settlements?after=not-a-cursor");
    expect(bad.status).toBe(400);
    expect(bad.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  },
};
