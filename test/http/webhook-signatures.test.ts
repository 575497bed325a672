import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Service, startService, tempDir } from "./helpers/service.js";
import { getJson, OTHER_SECRET, postJson, SECRET, sendWebhook, signWith } from "./helpers/webhooks.js";

const dir = tempDir();
let service: Service;

beforeAll(async () => {
  service = await startService({ db: dir.file("signatures.db"), env: { FINALITY_WEBHOOK_SECRET: SECRET } });
});
afterAll(async () => {
  await service?.stop();
  dir.cleanup();
});

async function jobAndEvents(id: string) {
  const job = await getJson(`${service.url}/v1/jobs/generic/${encodeURIComponent(id)}`);
  const events = await getJson(`${service.url}/v1/jobs/generic/${encodeURIComponent(id)}/events`);
  return { job, events };
}

describe("webhook signatures over real HTTP", () => {
  it("accepts a webhook signed by the official standardwebhooks package", async () => {
    await postJson(`${service.url}/v1/jobs`, { provider: "generic", id: "op-ok" });
    const sent = await sendWebhook(service.url, "generic", {
      jobId: "op-ok",
      state: "succeeded",
      result: { n: 1 },
    });
    expect(sent).toMatchObject({
      status: 200,
      body: { outcome: "applied", applied: true, state: "succeeded" },
    });
    const { job } = await jobAndEvents("op-ok");
    expect(job.body).toMatchObject({ state: "succeeded", settledBy: "webhook", result: { n: 1 } });
  });

  it("accepts any of several signatures and any of several secrets (rotation)", async () => {
    const body = JSON.stringify({ jobId: "op-rotated", state: "running" });
    const headers = signWith(SECRET, body);
    const other = signWith(OTHER_SECRET, body, {
      id: headers["webhook-id"],
      timestampSeconds: Number(headers["webhook-timestamp"]),
    });
    headers["webhook-signature"] =
      `${other["webhook-signature"]} v1,bm90IGEgc2lnbmF0dXJl ${headers["webhook-signature"]}`;
    const sent = await sendWebhook(service.url, "generic", body, { headers });
    expect(sent.status).toBe(200);
  });

  it("404 for an unknown provider and 405 for another method, on the fast path and off it", async () => {
    for (const provider of ["nobody", "NoBody", "a%2Fb"]) {
      const sent = await sendWebhook(service.url, provider, { jobId: "x", state: "running" });
      expect(sent).toMatchObject({ status: 404, body: { code: "unknown-provider" } });
    }
    const put = await fetch(`${service.url}/webhooks/generic`, { method: "PUT", body: "{}" });
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")).toBe("POST");
  });

  describe("refuses with 401 and changes nothing", () => {
    const id = "op-guarded";
    let before: Awaited<ReturnType<typeof jobAndEvents>>;

    beforeAll(async () => {
      await postJson(`${service.url}/v1/jobs`, { provider: "generic", id });
      before = await jobAndEvents(id);
      expect(before.job.body.state).toBe("pending");
    });

    const body = JSON.stringify({ jobId: id, state: "succeeded" });
    const cases: [string, () => Record<string, string>, string][] = [
      [
        "a tampered body",
        () => signWith(SECRET, body.replace("succeeded", "failed")),
        "no-matching-signature",
      ],
      ["a wrong secret", () => signWith(OTHER_SECRET, body), "no-matching-signature"],
      [
        "an old timestamp",
        () => signWith(SECRET, body, { timestampSeconds: Math.floor(Date.now() / 1000) - 600 }),
        "timestamp-too-old",
      ],
      [
        "a timestamp from the future",
        () => signWith(SECRET, body, { timestampSeconds: Math.floor(Date.now() / 1000) + 600 }),
        "timestamp-too-new",
      ],
      ["missing headers", () => ({ "content-type": "application/json" }), "missing-headers"],
      [
        "a missing signature header",
        () => {
          const { "webhook-signature": _, ...rest } = signWith(SECRET, body);
          return rest;
        },
        "missing-headers",
      ],
      [
        "a non-numeric timestamp",
        () => ({ ...signWith(SECRET, body), "webhook-timestamp": "12abc" }),
        "bad-timestamp",
      ],
      [
        "a signature of another version",
        () => {
          const headers = signWith(SECRET, body);
          return { ...headers, "webhook-signature": headers["webhook-signature"]!.replace("v1,", "v2,") };
        },
        "no-matching-signature",
      ],
    ];

    it.each(cases)("%s", async (_name, headers, reason) => {
      // The tampered case sends the original body with the signature of another one.
      const sent = await sendWebhook(service.url, "generic", body, { headers: headers() });
      expect(sent.status).toBe(401);
      expect(sent.body).toMatchObject({
        type: "urn:finality:problem:signature-invalid",
        status: 401,
        code: "signature-invalid",
        reason,
      });
      expect(await jobAndEvents(id)).toEqual(before);
    });

    it("counts every refusal in /metrics", async () => {
      const text = await (await fetch(`${service.url}/metrics`)).text();
      const line = text
        .split("\n")
        .find((l) =>
          l.startsWith('finality_webhooks_received_total{provider="generic",outcome="signature-invalid"}'),
        );
      expect(Number(line?.split(" ")[1])).toBeGreaterThanOrEqual(cases.length);
    });
  });
});
