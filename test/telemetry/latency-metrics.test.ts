import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getJson, postJson, sendWebhook } from "../http/helpers/webhooks.js";
import { serveWithEffect, startReceiver } from "./helpers.js";

// The latency metrics on a real `serve`: a webhook whose updateTime is 40 s old settles a job
// (detection 40 s by webhook; its effect delivered ~40 s after the completion), a registered job
// settled by a reconcile poll whose answer says it finished 100 s ago (detection 100 s by
// reconcile), and an open job's age by provider.

const AGO = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();

/** The value of one sample line of the exposition, or undefined. */
function sample(body: string, name: string, labels: string): number | undefined {
  const line = body.split("\n").find((l) => l.startsWith(`${name}{${labels}}`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
}

async function metrics(url: string): Promise<string> {
  return (await fetch(`${url}/metrics`)).text();
}

/** Until `check` holds, reading again after each answer (each read is an HTTP round trip, no timer). */
async function until<T>(read: () => Promise<T>, check: (value: T) => boolean): Promise<T> {
  for (;;) {
    const value = await read();
    if (check(value)) return value;
  }
}

describe("latency metrics", () => {
  let statusApi: Server;
  let polled: Promise<unknown>;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let served: Awaited<ReturnType<typeof serveWithEffect>>;

  beforeAll(async () => {
    statusApi = createServer((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ jobId: "job-polled", state: "succeeded", updateTime: AGO(100) }));
    });
    polled = once(statusApi, "request");
    statusApi.listen(0, "127.0.0.1");
    await once(statusApi, "listening");
    const { port } = statusApi.address() as AddressInfo;
    receiver = await startReceiver();
    served = await serveWithEffect({
      receiverUrl: receiver.url,
      acme: {
        poll: { url: `http://127.0.0.1:${port}/status/{id}` },
        reconcile: { graceSeconds: 0.05, minIntervalSeconds: 0.05, maxIntervalSeconds: 1 },
      },
    });
  }, 60_000);
  afterAll(async () => {
    await served?.cleanup();
    await receiver?.close();
    await new Promise((resolve) => statusApi?.close(resolve));
  });

  it("finality_detection_delay_seconds and finality_completion_to_effect_seconds move by source, provider and effect", async () => {
    const sent = await sendWebhook(served.service.url, "acme", {
      jobId: "job-hooked",
      state: "succeeded",
      updateTime: AGO(40),
    });
    expect(sent.status).toBe(200);
    const url = served.service.url;
    const webhook = await metrics(url);
    expect(
      sample(webhook, "finality_detection_delay_seconds_count", 'provider="acme",source="webhook"'),
    ).toBe(1);
    const detected = sample(
      webhook,
      "finality_detection_delay_seconds_sum",
      'provider="acme",source="webhook"',
    );
    expect(detected).toBeGreaterThanOrEqual(39);
    expect(detected).toBeLessThan(60);
    expect(
      sample(webhook, "finality_detection_delay_seconds_bucket", 'le="30",provider="acme",source="webhook"'),
    ).toBe(0);
    expect(
      sample(webhook, "finality_detection_delay_seconds_bucket", 'le="60",provider="acme",source="webhook"'),
    ).toBe(1);

    await receiver.received(1);
    const delivered = await until(
      () => metrics(url),
      (body) =>
        sample(body, "finality_completion_to_effect_seconds_count", 'provider="acme",effect="notify"') === 1,
    );
    const toEffect = sample(
      delivered,
      "finality_completion_to_effect_seconds_sum",
      'provider="acme",effect="notify"',
    );
    expect(toEffect).toBeGreaterThanOrEqual(detected as number);
    expect(toEffect).toBeLessThan(60);

    // Registered, then settled by the reconciler's poll: the answer's updateTime is 100 s old.
    expect((await postJson(`${url}/v1/jobs`, { provider: "acme", id: "job-polled" })).status).toBe(201);
    await polled;
    const reconciled = await until(
      () => metrics(url),
      (body) =>
        sample(body, "finality_detection_delay_seconds_count", 'provider="acme",source="reconcile"') === 1,
    );
    const byPoll = sample(
      reconciled,
      "finality_detection_delay_seconds_sum",
      'provider="acme",source="reconcile"',
    );
    expect(byPoll).toBeGreaterThanOrEqual(99);
    expect(byPoll).toBeLessThan(130);
    // The webhook's sample did not move.
    expect(
      sample(reconciled, "finality_detection_delay_seconds_count", 'provider="acme",source="webhook"'),
    ).toBe(1);
  }, 60_000);

  it("finality_open_jobs_oldest_age_seconds is the age of each provider's oldest open job", async () => {
    const url = served.service.url;
    const submittedAt = Date.now();
    // An open job the reconciler cannot settle: running, per its webhook.
    await sendWebhook(url, "acme", { jobId: "job-open", state: "running" });
    const job = await getJson(`${url}/v1/jobs/acme/job-open`);
    expect(job.status).toBe(200);
    const body = await metrics(url);
    const age = sample(body, "finality_open_jobs_oldest_age_seconds", 'provider="acme"');
    expect(age).toBeGreaterThanOrEqual(0);
    expect(age).toBeLessThanOrEqual((Date.now() - submittedAt) / 1000 + 0.001);
    expect(body).not.toContain('finality_open_jobs_oldest_age_seconds{provider="quiet"}');
  }, 60_000);
});
