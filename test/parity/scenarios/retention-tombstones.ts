import { createHmac } from "node:crypto";
import { expect } from "vitest";
import { SECRET } from "../../http/helpers/webhooks.js";
import type { Running } from "../deployments.js";
import { deliveriesFor, eventually, json, type StartScenario } from "../scenario.js";

const HOOKED = "ret-hmac";
const FOUND = "ret-disco";
const HMAC_SECRET = "parity-retention-hmac-0123";

/** An hmac-sha256 webhook: no signed timestamp, so the same request can be replayed days later. */
async function hmacWebhook(running: Running, id: string, state: string) {
  const body = JSON.stringify({ jobId: id, state });
  const response = await running.fetch(`/webhooks/${HOOKED}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-hub-signature-256": `sha256=${createHmac("sha256", HMAC_SECRET).update(body).digest("hex")}`,
    },
    body,
  });
  await response.arrayBuffer();
  return response.status;
}

async function pruned(running: Running, provider: string, id: string) {
  const { status, body } = await json<{ reason?: string }>(running, `/v1/jobs/${provider}/${id}`);
  expect(status, `${provider}/${id}`).toBe(404);
  expect(body.reason, `${provider}/${id}`).toBe("already-settled-pruned");
}

async function feed(running: Running, provider: string) {
  const { body } = await json<{ items: { id: string; state: string }[] }>(
    running,
    `/v1/settlements?provider=${provider}&limit=100`,
  );
  return body.items.map((i) => [i.id, i.state]);
}

/** Windows of seconds, in days: what a deployment accepts, so that no clock need be moved. */
const SECONDS = 1 / 86_400;
// Long enough that both jobs are seen settled and delivered before either is pruned.
const WINDOW_DAYS = 10 * SECONDS;

/**
 * Retention with tombstones, then replays: one job settled by webhook and one adopted by a
 * discovery sweep and settled by a poll, each effect delivered; then the settled-jobs and
 * delivery-id windows (10 s; the webhook tolerance 1 s, so the config check accepts them) pass on
 * the deployment's own clock and retention prunes both jobs, leaving tombstones (kept 400 days). The webhook replayed as it was and the sweep listing the other job again
 * (it lists from the start every time) change nothing: no second effect, no second settlement,
 * the jobs stay pruned.
 */
export const retentionTombstones: StartScenario = {
  name: "retention-tombstones",
  async run(deployment, { receiver, provider }) {
    let running: Running | undefined;
    try {
      running = await deployment.start({
        providers: {
          [HOOKED]: {
            type: "generic",
            webhook: {
              secrets: [HMAC_SECRET],
              scheme: "hmac-sha256",
              header: "x-hub-signature-256",
              prefix: "sha256=",
              toleranceSeconds: 1,
            },
          },
          [FOUND]: {
            type: "generic",
            webhook: { secrets: [SECRET], toleranceSeconds: 1 },
            poll: { url: `${provider.url}/jobs/{id}`, timeoutSeconds: 2 },
            // No cursor kept: every sweep lists from the first page, so the job comes back.
            discover: {
              enabled: true,
              url: `${provider.url}/jobs?after=`,
              intervalSeconds: 1,
              lookbackHours: 96,
            },
          },
        },
        effects: [{ name: "ret-settled", url: receiver.url, secret: SECRET, providers: [HOOKED, FOUND] }],
        retention: { settledJobsDays: WINDOW_DAYS, deliveriesDays: WINDOW_DAYS, intervalMinutes: 0.005 },
        reconcile: { graceSeconds: 0.5, minIntervalSeconds: 0.5, maxIntervalSeconds: 1 },
        log: { level: process.env.PARITY_LOG_LEVEL ?? "error" },
      });
      const r = running;
      expect(await hmacWebhook(r, "hooked-1", "running")).toBe(200);
      expect(await hmacWebhook(r, "hooked-1", "succeeded")).toBe(200);
      provider.addJob("found-1", [{ afterMs: 0, state: "failed" }]);
      await eventually(r, async () => {
        expect((await json(r, `/v1/jobs/${HOOKED}/hooked-1`)).body.state).toBe("succeeded");
        expect((await json(r, `/v1/jobs/${FOUND}/found-1`)).body.state).toBe("failed");
        expect(deliveriesFor(receiver, [HOOKED, FOUND])).toHaveLength(2);
      });
      const settledBefore = [await feed(r, HOOKED), await feed(r, FOUND)];
      expect(settledBefore).toEqual([[["hooked-1", "succeeded"]], [["found-1", "failed"]]]);

      // The windows pass in real time (no clock moved).
      await eventually(
        r,
        async () => {
          await pruned(r, HOOKED, "hooked-1");
          await pruned(r, FOUND, "found-1");
        },
        40_000,
      );

      // The replay, and two more sweeps that list the pruned job again.
      expect(await hmacWebhook(r, "hooked-1", "succeeded")).toBe(200);
      const lists = provider.listCursors.length;
      await eventually(r, async () => expect(provider.listCursors.length).toBeGreaterThanOrEqual(lists + 2));
      await pruned(r, HOOKED, "hooked-1");
      await pruned(r, FOUND, "found-1");
      expect([await feed(r, HOOKED), await feed(r, FOUND)]).toEqual(settledBefore);
      for (const p of [HOOKED, FOUND]) {
        const { body } = await json<{ items: { status: string }[] }>(
          r,
          `/v1/effects?provider=${p}&limit=100`,
        );
        expect(
          body.items.filter((e) => e.status !== "delivered"),
          p,
        ).toEqual([]);
      }
      expect(deliveriesFor(receiver, [HOOKED, FOUND])).toHaveLength(2);
      // The replay reached the ledger and was answered by the tombstone (the audit trail outlives the job).
      const events = await json<{ items: { applied: boolean; reason: string | null }[] }>(
        r,
        `/v1/jobs/${HOOKED}/hooked-1/events`,
      );
      expect(events.body.items.filter((e) => !e.applied).map((e) => e.reason)).toEqual([
        "already-settled-pruned",
      ]);
    } finally {
      await running?.stop();
    }
  },
};
