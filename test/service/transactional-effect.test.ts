import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app/create-app.js";
import { parseConfig } from "../../src/config/load-config.js";
import { createFinality } from "../../src/engine/create-finality.js";
import { createWebhookReceivers } from "../../src/providers/node-providers.js";
import { engineOf } from "../helpers/engine.js";
import { signWith } from "../http/helpers/webhooks.js";
import { SECRET } from "./service-helpers.js";

describe("a transactional effect that throws", () => {
  it("answers the webhook 5xx, commits nothing, and the sender's retry is applied once the effect succeeds", async () => {
    const config = parseConfig(
      { providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } } },
      {},
      { db: ":memory:" },
    );
    let refuse = true;
    const finality = createFinality({
      store: { sqlite: ":memory:" },
      providers: { acme: {} },
      effects: [
        {
          name: "bill",
          on: ["succeeded"],
          transactional: async (job, tx) => {
            await tx.execute("CREATE TABLE IF NOT EXISTS invoices (job_id TEXT PRIMARY KEY)");
            await tx.execute("INSERT INTO invoices (job_id) VALUES (?)", [job.id]);
            if (refuse) throw new Error("billing is down");
          },
        },
      ],
    });
    const app = createApp({
      finality,
      config,
      receivers: createWebhookReceivers(config.providers, () => engineOf(finality).clock.now()),
    });
    try {
      const body = JSON.stringify({ jobId: "j1", state: "succeeded" });
      const headers = signWith(SECRET, body, { id: "msg_retry_me" });
      const first = await app.request("/webhooks/acme", { method: "POST", headers, body });
      expect(first.status).toBeGreaterThanOrEqual(500);
      expect(first.headers.get("content-type")).toContain("application/problem+json");
      expect(await finality.getJob({ provider: "acme", id: "j1" })).toBeNull();
      expect(await finality.jobEvents({ provider: "acme", id: "j1" })).toEqual([]);

      refuse = false;
      const retried = await app.request("/webhooks/acme", { method: "POST", headers, body });
      expect(retried.status).toBe(200);
      expect(await retried.json()).toMatchObject({ outcome: "applied" });
      expect((await finality.getJob({ provider: "acme", id: "j1" }))?.state).toBe("succeeded");
      const invoices = await engineOf(finality).store.transaction((tx) =>
        tx.execute("SELECT job_id FROM invoices"),
      );
      expect(invoices).toEqual([{ job_id: "j1" }]);
    } finally {
      await finality.close();
    }
  });
});
