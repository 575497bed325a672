import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RawAnswer, type RawPostBody, rawPost } from "../helpers/raw-post.js";
import { tempDir } from "../helpers/temp-dir.js";
import type { Service } from "../http/helpers/service.js";
import { SECRET, signWith } from "../http/helpers/webhooks.js";
import { serveWith } from "../service/service-helpers.js";
import { startWorkerLedger, TEST_API_TOKEN, type WorkerLedger } from "./helpers/worker-ledger.js";

const LIMIT = 64 * 1024;
/** Well past the limit, and past what a loopback socket buffers before the sender must wait. */
const BIG = 4 * 1024 * 1024;
const BEARER = { authorization: `Bearer ${TEST_API_TOKEN}` };

/** What workerd logs when something reads a request stream after its response was sent. */
const UNCAUGHT = /uncaught exception|Can't read from request stream/;

interface Oversized {
  name: string;
  path: string;
  headers: Record<string, string>;
  body: RawPostBody;
  /** The answer it must get, on the Worker and on Node alike. */
  status: number;
  code: string;
}

/** Requests a caller can send without any secret, each refused before its body is read in full. */
const OVERSIZED: Oversized[] = [
  {
    name: "a webhook with a Content-Length over the limit",
    path: "/webhooks/acme",
    headers: signWith(SECRET, ""),
    body: { bytes: BIG, chunked: false },
    status: 413,
    code: "payload-too-large",
  },
  {
    name: "a chunked webhook over the limit",
    path: "/webhooks/acme",
    headers: signWith(SECRET, ""),
    body: { bytes: BIG, chunked: true },
    status: 413,
    code: "payload-too-large",
  },
  {
    name: "a chunked webhook just over the limit",
    path: "/webhooks/acme",
    headers: signWith(SECRET, ""),
    body: { bytes: LIMIT + 1, chunked: true },
    status: 413,
    code: "payload-too-large",
  },
  {
    name: "a webhook whose body never ends (twice the limit sent, the stream held open)",
    path: "/webhooks/acme",
    headers: signWith(SECRET, ""),
    body: { bytes: 2 * LIMIT, chunked: true, open: true },
    status: 413,
    code: "payload-too-large",
  },
  {
    name: "an API call with a Content-Length over the limit",
    path: "/v1/jobs",
    headers: { ...BEARER, "content-type": "application/json" },
    body: { bytes: BIG, chunked: false },
    status: 413,
    code: "payload-too-large",
  },
  {
    name: "an API call with a chunked body over the limit",
    path: "/v1/jobs",
    headers: { ...BEARER, "content-type": "application/json" },
    body: { bytes: BIG, chunked: true },
    status: 413,
    code: "payload-too-large",
  },
  {
    name: "a large body for an unknown provider (refused before the body is read)",
    path: "/webhooks/nobody",
    headers: signWith(SECRET, ""),
    body: { bytes: BIG, chunked: false },
    status: 404,
    code: "unknown-provider",
  },
  {
    name: "a large body without the API token (refused before the body is read)",
    path: "/v1/jobs",
    headers: { "content-type": "application/json" },
    body: { bytes: BIG, chunked: true },
    status: 401,
    code: "unauthorized",
  },
];

let jobs = 0;

/** A validly signed webhook for a new job, over real HTTP; resolves with its status. */
async function signedWebhook(base: URL | string): Promise<number> {
  const body = JSON.stringify({ jobId: `after-${++jobs}`, state: "running" });
  const response = await fetch(new URL("/webhooks/acme", base), {
    method: "POST",
    headers: signWith(SECRET, body),
    body,
  });
  await response.arrayBuffer();
  return response.status;
}

function answerOf(answer: RawAnswer) {
  return {
    status: answer.status,
    contentType: answer.contentType?.split(";")[0] ?? null,
    code: answer.body?.code ?? null,
    error: answer.error ?? null,
  };
}

const expected = (step: Oversized) => ({
  status: step.status,
  contentType: "application/problem+json",
  code: step.code,
  error: null,
});

const config = (secret: string) => ({
  server: { bodyLimitBytes: LIMIT },
  providers: { acme: { type: "generic", webhook: { secrets: [secret] } } },
  log: { level: "error" },
});

describe("bodies over the limit on Workers (workerd, the Worker on its own socket)", () => {
  let worker: WorkerLedger;
  beforeAll(async () => {
    worker = await startWorkerLedger(config("env:ACME_WEBHOOK_SECRET"), { ACME_WEBHOOK_SECRET: SECRET });
  });
  afterAll(() => worker?.dispose());

  /** What workerd logged as uncaught since line `from` (in production, such a throw restarts the isolate). */
  const uncaught = (from = 0) => worker.runtimeLog.slice(from).filter((line) => UNCAUGHT.test(line));

  for (const step of OVERSIZED)
    it(`${step.name}: ${step.status} problem, and a signed webhook right after it gets its 200`, async () => {
      const from = worker.runtimeLog.length;
      const answer = await rawPost(worker.url, step.path, step.headers, step.body);
      expect(answerOf(answer)).toEqual(expected(step));
      expect(await signedWebhook(worker.url)).toBe(200);
      expect(uncaught(from)).toEqual([]);
    });

  // A sender that writes for as long as the connection lets it: the Worker answers 413 and workerd
  // closes on a body it stopped reading, so whether the sender reads that 413 or runs into the reset
  // first is a race of the two sockets (not the Worker's to decide). What is the Worker's: it stops
  // reading (the 64 MiB drain cap plus socket buffers, far below the sender's 256 MiB cap) and
  // takes the next webhook.
  it("a sender that never stops sending is cut off, and a signed webhook right after it gets its 200", async () => {
    const from = worker.runtimeLog.length;
    const answer = await rawPost(worker.url, "/webhooks/acme", signWith(SECRET, ""), {
      bytes: 0,
      chunked: true,
      endless: true,
    });
    expect(answer.sentBytes).toBeLessThan(128 * 1024 * 1024);
    if (answer.error === undefined) expect(answerOf(answer)).toEqual(expected(OVERSIZED[0] as Oversized));
    expect(await signedWebhook(worker.url)).toBe(200);
    expect(uncaught(from)).toEqual([]);
  });

  it("all of them at once, among signed webhooks: each gets its own answer, every webhook its 200", async () => {
    const [refused, webhooks] = await Promise.all([
      Promise.all(OVERSIZED.map((step) => rawPost(worker.url, step.path, step.headers, step.body))),
      Promise.all(Array.from({ length: 8 }, () => signedWebhook(worker.url))),
    ]);
    expect(refused.map(answerOf)).toEqual(OVERSIZED.map(expected));
    expect(webhooks).toEqual(Array(8).fill(200));
  });

  it("nothing refused was stored, and workerd logged no uncaught exception at all", async () => {
    const listed = (await (await worker.fetch("/v1/jobs?limit=500")).json()) as { items: { id: string }[] };
    expect(listed.items.map((job) => job.id).sort()).toEqual(
      Array.from({ length: OVERSIZED.length + 1 + 8 }, (_, i) => `after-${i + 1}`).sort(),
    );
    expect(uncaught()).toEqual([]);
  });
});

describe("a Worker's body limit", () => {
  it("is the configured one: a body over the default 1 MiB but under a 2 MiB server.bodyLimitBytes is taken", async () => {
    const worker = await startWorkerLedger(
      { ...config("env:ACME_WEBHOOK_SECRET"), server: { bodyLimitBytes: 2 * 1024 * 1024 } },
      { ACME_WEBHOOK_SECRET: SECRET },
    );
    try {
      const body = JSON.stringify({ jobId: "large", state: "running", padding: "x".repeat(1536 * 1024) });
      const response = await fetch(new URL("/webhooks/acme", worker.url), {
        method: "POST",
        headers: signWith(SECRET, body),
        body,
      });
      expect({ status: response.status, body: await response.json() }).toMatchObject({
        status: 200,
        body: { outcome: "applied", jobId: "large" },
      });
    } finally {
      await worker.dispose();
    }
  });
});

describe("the same bodies on Node (finality serve over real HTTP)", () => {
  const dir = tempDir("finality-body-limit-");
  let service: Service;
  beforeAll(async () => {
    service = await serveWith(dir, dir.file("limits.db"), {
      ...config(SECRET),
      server: { bodyLimitBytes: LIMIT, apiToken: TEST_API_TOKEN },
    });
  });
  afterAll(async () => {
    await service?.stop();
    dir.cleanup();
  });

  it("get the same answers as on Workers, one after another and all at once", async () => {
    for (const step of OVERSIZED) {
      const answer = await rawPost(service.url, step.path, step.headers, step.body);
      expect({ name: step.name, ...answerOf(answer) }).toEqual({ name: step.name, ...expected(step) });
      expect(await signedWebhook(service.url)).toBe(200);
    }
    const [refused, webhooks] = await Promise.all([
      Promise.all(OVERSIZED.map((step) => rawPost(service.url, step.path, step.headers, step.body))),
      Promise.all(Array.from({ length: 8 }, () => signedWebhook(service.url))),
    ]);
    expect(refused.map(answerOf)).toEqual(OVERSIZED.map(expected));
    expect(webhooks).toEqual(Array(8).fill(200));
    expect(service.child.exitCode).toBeNull();
  });
});
