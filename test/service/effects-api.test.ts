import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDispatcher } from "../../src/engine/dispatcher.js";
import { EffectReceiver } from "../helpers/receiver.js";
import { inProcessApp } from "../http/helpers/in-process.js";
import { signWith } from "../http/helpers/webhooks.js";
import { SECRET } from "./service-helpers.js";

interface EffectJson {
  id: string;
  status: string;
  attempts: number;
  idempotencyKey: string;
  lastError: string | null;
}

describe("the effects API", () => {
  const receiver = new EffectReceiver(SECRET);
  beforeAll(() => receiver.listen());
  afterAll(() => receiver.close());

  it("lists, re-arms a dead effect, and replays a settled job's effects under the same key", async () => {
    const t = await inProcessApp({
      providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } },
      effects: [{ name: "notify", url: receiver.url, secret: SECRET }],
    });
    try {
      const dispatcher = createDispatcher(t.finality, { retry: { maxAttempts: 1 } });
      const json = async <T>(path: string, init?: RequestInit) => {
        const response = await t.app.request(path, init);
        return { status: response.status, body: (await response.json()) as T };
      };
      const body = JSON.stringify({ jobId: "j1", state: "succeeded" });
      expect(
        (await t.app.request("/webhooks/acme", { method: "POST", headers: signWith(SECRET, body), body }))
          .status,
      ).toBe(200);

      receiver.decide = () => 503;
      await dispatcher.runOnce();
      const dead = await json<{ items: EffectJson[] }>("/v1/effects?status=dead");
      expect(dead.body.items).toHaveLength(1);
      const [effect] = dead.body.items;
      expect(effect?.lastError).toContain("503");
      expect((await json<{ items: EffectJson[] }>("/v1/effects?status=pending")).body.items).toHaveLength(0);

      receiver.decide = () => 204;
      const retried = await json<EffectJson>(`/v1/effects/${effect?.id}/retry`, { method: "POST" });
      expect(retried.status).toBe(200);
      expect(retried.body.status).toBe("pending");
      await dispatcher.runOnce();
      const delivered = await json<{ items: EffectJson[] }>("/v1/effects?job=j1");
      expect(delivered.body.items.map((e) => e.status)).toEqual(["delivered"]);
      expect(receiver.applied.size).toBe(1);

      const again = await json<{ type: string }>(`/v1/effects/${effect?.id}/retry`, { method: "POST" });
      expect(again.status).toBe(409);
      expect((await t.app.request("/v1/effects/nope/retry", { method: "POST" })).status).toBe(404);

      const replay = await json<{ items: EffectJson[] }>("/v1/jobs/acme/j1/replay-effects", {
        method: "POST",
      });
      expect(replay.status).toBe(200);
      expect(replay.body.items.map((e) => e.status)).toEqual(["pending"]);
      await dispatcher.runOnce();
      const keys = receiver.deliveries.filter((d) => d.body.job.id === "j1").map((d) => d.key);
      expect(new Set(keys)).toEqual(new Set([effect?.idempotencyKey]));
      expect(receiver.applied.size).toBe(1);
      const events = await json<{ items: { detail: { action?: string } | null }[] }>(
        "/v1/jobs/acme/j1/events",
      );
      const actions = events.body.items.map((e) => e.detail?.action).filter(Boolean);
      expect(actions).toEqual(["effect-retry", "effect-replay"]);

      expect((await t.app.request("/v1/jobs/acme/missing/replay-effects", { method: "POST" })).status).toBe(
        404,
      );
      expect((await t.app.request("/v1/effects?status=bogus")).status).toBe(400);
    } finally {
      await t.close();
    }
  });
});
