import { expect } from "vitest";
import { SECRET, signWith } from "../../http/helpers/webhooks.js";
import {
  deliveriesFor,
  eventually,
  expectOncePerKey,
  json,
  post,
  SCALE,
  type Scenario,
} from "../scenario.js";

const TIMEOUT_SECONDS = 2;

/**
 * Intents: each attached to a remote id (ids spread over shards on Workers) is readable at once
 * with the intent's kind, settles by webhook and fires its effect once; an intent never attached
 * is flagged `orphaned` after `intentTimeoutSeconds`, and its orphan effect fires once.
 */
export const intents: Scenario = {
  name: "intents-attach-orphan",
  config: ({ receiver }) => ({
    providers: {
      intent: { type: "generic", webhook: { secrets: [SECRET] }, intentTimeoutSeconds: TIMEOUT_SECONDS },
    },
    effects: [
      { name: "intent-settled", url: receiver.url, secret: SECRET, providers: ["intent"], on: ["succeeded"] },
      { name: "intent-orphans", url: receiver.url, secret: SECRET, providers: ["intent"], on: ["orphaned"] },
    ],
  }),
  async run(running, { receiver }) {
    const count = 4 * SCALE;
    expect(
      (await post(running, "/v1/intents", { provider: "intent", key: "lonely", kind: "render" })).status,
    ).toBe(201);
    for (let i = 0; i < count; i++) {
      const created = await post(running, "/v1/intents", {
        provider: "intent",
        key: `k-${i}`,
        kind: "render",
      });
      expect(created.status).toBe(201);
      const attached = await post(running, `/v1/intents/k-${i}/attach`, { id: `remote-${i}` });
      expect(attached.status).toBe(200);
      expect(attached.body).toMatchObject({
        status: "attached",
        jobId: `remote-${i}`,
        job: { kind: "render" },
      });
      expect((await json(running, `/v1/jobs/intent/remote-${i}`)).body).toMatchObject({
        kind: "render",
        state: "pending",
      });
    }
    const other = await post(running, "/v1/intents/k-0/attach", { id: "elsewhere" });
    expect(other.status).toBe(409);
    expect(other.type).toMatch(/^application\/problem\+json/);
    expect((await json(running, "/v1/jobs/intent/elsewhere")).status).toBe(404);

    for (let i = 0; i < count; i++) {
      const body = JSON.stringify({ jobId: `remote-${i}`, state: "succeeded", seq: 1 });
      const answer = await running.fetch("/webhooks/intent", {
        method: "POST",
        headers: signWith(SECRET, body),
        body,
      });
      expect(answer.status).toBe(200);
    }
    // One job per attached id, on the list as well as by key.
    const listed = await json<{ items: { id: string }[] }>(running, "/v1/jobs?provider=intent&limit=500");
    expect(listed.body.items.map((j) => j.id).sort()).toEqual(
      Array.from({ length: count }, (_, i) => `remote-${i}`).sort(),
    );

    await eventually(running, async () => {
      expect((await json(running, "/v1/intents/lonely")).body).toMatchObject({ status: "orphaned" });
    });
    expect((await json(running, "/v1/intents/k-0")).body).toMatchObject({ status: "attached" });
    await receiver.until(() => deliveriesFor(receiver, ["intent"]).length >= count + 1);
    const deliveries = deliveriesFor(receiver, ["intent"]);
    expectOncePerKey(deliveries, count + 1);
    expect(deliveries.filter((d) => d.body.type === "intent.orphaned")).toHaveLength(1);
  },
};
