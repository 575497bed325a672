import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { pruneOnce } from "../../src/engine/retention.js";
import { engineOf } from "../helpers/engine.js";
import { ACME, type InProcess, inProcessApp, webhookInit } from "./helpers/in-process.js";
import { SECRET, signWith } from "./helpers/webhooks.js";

// The early-completion inbox and tombstones over HTTP: what a webhook is answered, what
// GET /v1/parked and the job lookup show, what a registration then does.

const DAY = 86_400_000;
let t: InProcess;
beforeEach(async () => {
  t = await inProcessApp({
    providers: { acme: ACME, strict: { ...ACME, unknownJobs: "registered-only" } },
    effects: [
      { name: "notify", url: "http://127.0.0.1:9/done", secret: SECRET, on: ["succeeded"] },
      { name: "images", url: "http://127.0.0.1:9/img", secret: SECRET, on: ["succeeded"], kinds: ["image"] },
    ],
  });
});
afterEach(async () => {
  await t.close();
});

function webhook(provider: string, payload: object, id: string) {
  const body = JSON.stringify(payload);
  return t.app.request(`/webhooks/${provider}`, webhookInit(body, signWith(SECRET, body, { id })));
}

const register = (provider: string, id: string, kind?: string) =>
  t.app.request("/v1/jobs", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ provider, id, kind }),
  });

async function effectNames(provider: string, id: string): Promise<string[]> {
  const page = await engineOf(t.finality).store.listEffects({ provider, jobId: id });
  return page.items.map((e) => e.name).sort();
}

describe("early-completion inbox over HTTP", () => {
  it("a completion before registration is parked (200), shown, and applied when the job is registered", async () => {
    const payload = { jobId: "early-1", state: "succeeded", result: { ok: true } };
    const parked = await webhook("strict", payload, "msg-1");
    expect(parked.status).toBe(200);
    expect(await parked.json()).toMatchObject({ outcome: "parked", applied: false, state: null });
    // The sender's retry of a stored delivery is a duplicate, answered 200 too.
    const retry = await webhook("strict", payload, "msg-1");
    expect(await retry.json()).toMatchObject({ outcome: "duplicate-delivery" });

    const list = await t.app.request("/v1/parked?provider=strict&id=early-1");
    expect(list.status).toBe(200);
    const body = (await list.json()) as { items: Record<string, unknown>[]; nextCursor: string | null };
    expect(body.nextCursor).toBeNull();
    expect(body.items).toEqual([
      expect.objectContaining({
        provider: "strict",
        id: "early-1",
        observation: expect.objectContaining({
          state: "succeeded",
          deliveryId: "msg-1",
          result: { ok: true },
        }),
      }),
    ]);
    expect(((await (await t.app.request("/v1/parked?provider=acme")).json()) as { items: [] }).items).toEqual(
      [],
    );

    const lookup = await t.app.request("/v1/jobs/strict/early-1");
    expect(lookup.status).toBe(404);
    expect(lookup.headers.get("content-type")).toBe("application/problem+json");
    expect(await lookup.json()).toMatchObject({
      code: "not-found",
      reason: "parked",
      parked: [{ observation: { state: "succeeded" } }],
    });

    // The dashboard shows it on its own page and on the job's (not found yet) page.
    const page = await (await t.app.request("/parked")).text();
    expect(page).toContain('data-parked="strict/early-1"');
    const jobPage = await t.app.request("/jobs/strict/early-1");
    expect(jobPage.status).toBe(404);
    expect(await jobPage.text()).toContain('data-section="parked"');

    const registered = await register("strict", "early-1", "image");
    expect(registered.status).toBe(201);
    expect(await registered.json()).toMatchObject({
      state: "succeeded",
      kind: "image",
      result: { ok: true },
    });
    expect(await effectNames("strict", "early-1")).toEqual(["images", "notify"]);
    expect(((await (await t.app.request("/v1/parked")).json()) as { items: [] }).items).toEqual([]);
    expect(await (await t.app.request("/parked")).text()).toContain("Nothing is parked.");
  });

  it.each([
    ["limit=0", "limit"],
    ["limit=x", "limit"],
    ["provider=", "provider"],
    ["bogus=1", "(root)"],
  ])("GET /v1/parked?%s is a 400 problem naming %s", async (query, field) => {
    const response = await t.app.request(`/v1/parked?${query}`);
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    const problem = (await response.json()) as { code: string; field?: string };
    expect(problem.code).toBe("invalid-request");
    if (field !== "(root)") expect(problem.field).toBe(field);
  });

  it("a registration after an adopted job settled enqueues the effects its kind now matches", async () => {
    await webhook("acme", { jobId: "late-1", state: "succeeded" }, "msg-2");
    expect(await effectNames("acme", "late-1")).toEqual(["notify"]);
    // The dispatcher is woken by this signal (serve, and the Workers alarm): the new row waits for no poll.
    let woken = 0;
    t.finality.onEffectsEnqueued(() => woken++);
    expect((await register("acme", "late-1", "image")).status).toBe(200);
    expect(await effectNames("acme", "late-1")).toEqual(["images", "notify"]);
    expect(woken).toBe(1);
    expect((await register("acme", "late-1", "image")).status).toBe(200);
    expect(woken).toBe(1);
  });
});

describe("tombstones over HTTP", () => {
  it("a webhook for a pruned job is answered 200 already-settled-pruned; the lookup says so; registering it again is 409", async () => {
    const payload = { jobId: "gone-1", state: "succeeded" };
    await webhook("acme", payload, "msg-3");
    // Effects delivered (they point nowhere here): mark them so that retention may prune the job.
    const now = engineOf(t.finality).clock.now();
    for (const effect of await engineOf(t.finality).store.claimEffects(now, 10, 60_000)) {
      await engineOf(t.finality).store.finishEffect({
        id: effect.id,
        claimedUntil: effect.leaseUntil ?? 0,
        kind: "delivered",
        at: now,
      });
    }
    const counts = await pruneOnce(engineOf(t.finality).store, t.config.retention, now + 15 * DAY);
    expect(counts).toMatchObject({ deliveries: 1, settledJobs: 1, tombstones: 0 });

    const replay = await webhook("acme", payload, "msg-3");
    expect(replay.status).toBe(200);
    expect(await replay.json()).toMatchObject({ outcome: "already-settled-pruned", applied: false });
    expect(await t.finality.getJob({ provider: "acme", id: "gone-1" })).toBeNull();

    const lookup = await t.app.request("/v1/jobs/acme/gone-1");
    expect(lookup.status).toBe(404);
    expect(await lookup.json()).toMatchObject({
      reason: "already-settled-pruned",
      tombstone: { state: "succeeded" },
    });
    expect(await (await t.app.request("/jobs/acme/gone-1")).text()).toContain('data-tombstone="succeeded"');
    const again = await register("acme", "gone-1");
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ code: "conflict", reason: "already-settled-pruned" });
    expect(await t.finality.getJob({ provider: "acme", id: "gone-1" })).toBeNull();
  });
});
