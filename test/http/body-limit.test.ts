import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Service, startService, tempDir } from "./helpers/service.js";
import { SECRET, sendWebhook, signWith } from "./helpers/webhooks.js";

const dir = tempDir();
let service: Service;

beforeAll(async () => {
  service = await startService({
    db: dir.file("limits.db"),
    env: { FINALITY_WEBHOOK_SECRET: SECRET, FINALITY_BODY_LIMIT_BYTES: "1024" },
  });
});
afterAll(async () => {
  await service?.stop();
  dir.cleanup();
});

/**
 * Streams a chunked body (no content-length) until the server answers, so the test shows that
 * the server refuses without waiting for the end of a body that never ends.
 */
function streamUntilAnswered(url: string): Promise<{ status: number; body: string; sentBytes: number }> {
  return new Promise((resolve, reject) => {
    let sentBytes = 0;
    let answered = false;
    const target = new URL(`${url}/webhooks/generic`);
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: "POST",
        headers: signWith(SECRET, ""),
      },
      (res) => {
        answered = true;
        let body = "";
        res.on("data", (chunk: Buffer) => {
          body += chunk.toString();
        });
        res.on("end", () => {
          req.destroy();
          resolve({ status: res.statusCode ?? 0, body, sentBytes });
        });
      },
    );
    req.on("error", (error) => {
      if (!answered) reject(error);
    });
    const chunk = Buffer.alloc(16 * 1024, "x");
    const pump = () => {
      while (!answered && sentBytes < 64 * 1024 * 1024) {
        sentBytes += chunk.length;
        if (!req.write(chunk)) {
          req.once("drain", pump);
          return;
        }
      }
    };
    pump();
  });
}

describe("the body limit over real HTTP", () => {
  it("413 for a body whose content-length is over the limit", async () => {
    const body = JSON.stringify({ jobId: "big", state: "running", result: "x".repeat(2000) });
    const sent = await sendWebhook(service.url, "generic", body);
    expect(sent.status).toBe(413);
    expect(sent.body).toMatchObject({ type: "urn:finality:problem:payload-too-large" });
  });

  it("413 for an endless chunked body, long before its end, and the server stays up", async () => {
    const answer = await streamUntilAnswered(service.url);
    expect(answer.status).toBe(413);
    expect(answer.sentBytes).toBeLessThan(64 * 1024 * 1024);
    expect(JSON.parse(answer.body)).toMatchObject({ code: "payload-too-large" });
    const ok = await sendWebhook(service.url, "generic", { jobId: "small", state: "running" });
    expect(ok.status).toBe(200);
  });

  it("a client that goes away mid-body changes nothing and the server stays up", async () => {
    const target = new URL(`${service.url}/webhooks/generic`);
    const body = JSON.stringify({ jobId: "half", state: "succeeded" });
    await new Promise<void>((resolve) => {
      const req = request({
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: "POST",
        headers: { ...signWith(SECRET, body), "content-length": String(body.length) },
      });
      req.on("error", () => resolve());
      req.on("close", () => resolve());
      req.write(body.slice(0, 10), () => req.destroy());
    });
    const ok = await sendWebhook(service.url, "generic", { jobId: "after-abort", state: "running" });
    expect(ok.status).toBe(200);
    expect(service.child.exitCode).toBeNull();
    const half = await fetch(`${service.url}/v1/jobs/generic/half`);
    expect(half.status).toBe(404);
  });
});
