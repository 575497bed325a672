import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EffectReceiver } from "../helpers/receiver.js";
import { tempDir } from "../helpers/temp-dir.js";
import { sendWebhook } from "../http/helpers/webhooks.js";
import { api, SECRET, serveWith } from "./service-helpers.js";

interface EffectJson {
  id: string;
  status: string;
  attempts: number;
  idempotencyKey: string;
}

describe("effects across a SIGKILL", () => {
  const dir = tempDir();
  const receiver = new EffectReceiver(SECRET);
  beforeAll(() => receiver.listen());
  afterAll(async () => {
    await receiver.close();
    dir.cleanup();
  });

  const config = (delivery: Record<string, unknown>) => ({
    providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } },
    effects: [{ name: "notify", url: receiver.url, secret: SECRET }],
    effectDelivery: { leaseSeconds: 1, timeoutSeconds: 0.5, ...delivery },
  });

  it("redelivers with the same key after a crash between sending and marking done; the receiver applies it once", async () => {
    const db = dir.file("sent-not-marked.db");
    // The receiver applies the first delivery, but the sender dies before it hears the answer.
    receiver.decide = (delivery) => {
      if (receiver.deliveries.length === 1) {
        receiver.applied.set(delivery.key, delivery);
        return "hold";
      }
      return 204;
    };
    const first = await serveWith(dir, db, config({}));
    expect((await sendWebhook(first.url, "acme", { jobId: "j1", state: "succeeded" })).status).toBe(200);
    await receiver.until(() => receiver.deliveries.length === 1);
    expect((await first.stop("SIGKILL")).signal).toBe("SIGKILL");
    for (const response of receiver.held.splice(0)) response.destroy();

    const second = await serveWith(dir, db, config({}));
    await receiver.until(() => receiver.deliveries.length === 2);
    const [a, b] = receiver.deliveries;
    expect(b?.key).toBe(a?.key);
    expect([a?.attempt, b?.attempt]).toEqual([1, 2]);
    expect(receiver.applied.size).toBe(1);
    const effects = await waitForStatus(second.url, "j1", "delivered");
    expect(effects[0]?.idempotencyKey).toBe(a?.key);
    await second.stop("SIGTERM");
  });

  it("delivers after restart what was committed but not yet dispatched when the process died", async () => {
    receiver.deliveries.length = 0;
    receiver.applied.clear();
    receiver.decide = () => 204;
    const db = dir.file("committed-not-sent.db");
    const first = await serveWith(dir, db, config({ enabled: false }), "paused.json");
    expect((await sendWebhook(first.url, "acme", { jobId: "j2", state: "failed" })).status).toBe(200);
    const pending = await api<{ items: EffectJson[] }>(`${first.url}/v1/effects?job=j2`);
    expect(pending.body.items.map((e) => e.status)).toEqual(["pending"]);
    await first.stop("SIGKILL");
    expect(receiver.deliveries).toHaveLength(0);

    const second = await serveWith(dir, db, config({}));
    await receiver.until(() => receiver.applied.size === 1);
    expect(receiver.deliveries).toHaveLength(1);
    expect(receiver.deliveries[0]?.body.job).toMatchObject({ provider: "acme", id: "j2", state: "failed" });
    await waitForStatus(second.url, "j2", "delivered");
    await second.stop("SIGTERM");
  });
});

/** The receiver answered before the service recorded it: wait for the record by re-reading. */
async function waitForStatus(base: string, job: string, status: string): Promise<EffectJson[]> {
  for (;;) {
    const { body } = await api<{ items: EffectJson[] }>(`${base}/v1/effects?job=${job}`);
    if (body.items.every((e) => e.status === status)) return body.items;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
