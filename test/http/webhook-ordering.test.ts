import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Service, startService, tempDir } from "./helpers/service.js";
import {
  getJson,
  postJson,
  SECRET,
  type Sent,
  sendWebhook,
  signWith,
  type WebhookBody,
} from "./helpers/webhooks.js";

const dir = tempDir();
let service: Service;

beforeAll(async () => {
  service = await startService({ db: dir.file("ordering.db"), env: { FINALITY_WEBHOOK_SECRET: SECRET } });
});
afterAll(async () => {
  await service?.stop();
  dir.cleanup();
});

const job = (id: string) => getJson(`${service.url}/v1/jobs/generic/${encodeURIComponent(id)}`);

describe("a webhook before the registration", () => {
  it("is adopted, and the later registration does not regress it", async () => {
    const id = "operations/early-bird";
    const sent = await sendWebhook(service.url, "generic", { jobId: id, state: "succeeded", result: "done" });
    expect(sent.body).toMatchObject({ outcome: "applied", state: "succeeded" });
    expect((await job(id)).body).toMatchObject({ state: "succeeded", registered: false, kind: null });

    const registered = await postJson(`${service.url}/v1/jobs`, {
      provider: "generic",
      id,
      kind: "video",
      metadata: { user: 7 },
    });
    expect(registered.status).toBe(200);
    expect(registered.body).toMatchObject({ state: "succeeded", registered: true, kind: "video" });
    expect((await job(id)).body).toMatchObject({
      state: "succeeded",
      settledBy: "webhook",
      registered: true,
      metadata: { user: 7 },
      result: "done",
    });
  });

  it("registration answers 201 for a new job, 200 after", async () => {
    const first = await postJson(`${service.url}/v1/jobs`, { provider: "generic", id: "fresh" });
    const second = await postJson(`${service.url}/v1/jobs`, { provider: "generic", id: "fresh" });
    expect([first.status, second.status]).toEqual([201, 200]);
    expect(second.body).toMatchObject({ state: "pending", version: first.body.version });
  });
});

/** Fisher–Yates with a seeded generator, so that a failure can be replayed. */
function shuffle<T>(items: T[], seed: number): T[] {
  let state = seed;
  const random = () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

describe("500 concurrent webhooks for 50 jobs, with duplicates and reordering", () => {
  const TERMINAL = ["succeeded", "failed", "cancelled", "expired"] as const;

  it("ends every job in the right state", async () => {
    const expected = new Map<string, string>();
    const requests: { body: string; headers: Record<string, string> }[] = [];
    for (let n = 0; n < 50; n++) {
      const id = `batch/${n}`;
      // Even jobs finish; odd jobs stay running. Each job gets 10 deliveries.
      const finishes = n % 2 === 0;
      const final = TERMINAL[n % TERMINAL.length]!;
      expected.set(id, finishes ? final : "running");
      const events: WebhookBody[] = [
        { jobId: id, state: "pending", seq: 0 },
        { jobId: id, state: "running", seq: 1 },
        { jobId: id, state: "running", seq: 2 },
        { jobId: id, state: "running", seq: 3 },
        { jobId: id, state: "pending", seq: 4 },
        { jobId: id, state: "SOMETHING_NEW", seq: 5 },
        finishes ? { jobId: id, state: final, seq: 6 } : { jobId: id, state: "running", seq: 6 },
      ];
      const signed = events.map((event) => {
        const body = JSON.stringify(event);
        return { body, headers: signWith(SECRET, body) };
      });
      // Three redeliveries of the same message (same webhook-id), as a sender retrying would.
      requests.push(...signed, signed[6]!, signed[6]!, signed[1]!);
      if (n % 5 === 0) await postJson(`${service.url}/v1/jobs`, { provider: "generic", id });
    }
    expect(requests).toHaveLength(500);

    const answers: Sent[] = await Promise.all(
      shuffle(requests, 42).map(({ body, headers }) =>
        sendWebhook(service.url, "generic", body, { headers }),
      ),
    );
    expect(answers.filter((a) => a.status !== 200)).toEqual([]);
    const outcomes = new Map<string, number>();
    for (const answer of answers) {
      const outcome = String(answer.body.outcome);
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    }
    expect(outcomes.get("duplicate-delivery")).toBe(150);
    expect(outcomes.get("unknown-state")).toBe(50);

    for (const [id, state] of expected) {
      const { body } = await job(id);
      expect({ id, state: body.state }).toEqual({ id, state });
      if (state !== "running") expect(body.settledBy).toBe("webhook");
    }
    const events = await getJson(`${service.url}/v1/jobs/generic/batch%2F0/events`);
    const items = events.body.items as { deliveryId: string | null; applied: boolean }[];
    // Registration (job 0 is registered) plus every delivery, applied or not.
    expect(items.filter((e) => e.deliveryId !== null)).toHaveLength(10);
  });
});
