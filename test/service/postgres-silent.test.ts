import { writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningService, serve } from "../../src/host/node/serve.js";
import { freezableProxy } from "../helpers/freezable-proxy.js";
import {
  adminClient,
  dropSchema,
  POSTGRES_TEST_URL,
  postgresSuite,
  uniqueSchemaName,
} from "../helpers/postgres.js";
import { type TempDir, tempDir } from "../helpers/temp-dir.js";
import { SECRET, signWith } from "../http/helpers/webhooks.js";

// PostgreSQL gone silent (frozen, or the network dropping packets: no refusal, no reset) under a
// real `serve`: a webhook in flight must not hang for as long as the silence lasts. The client's
// deadline (store.queryTimeoutSeconds) answers it 503 problem+json; nothing was acknowledged, so
// the sender's retry after the silence is recorded once.
await postgresSuite("PostgreSQL gone silent");

/** A signed webhook with a fixed id: its status, content type and how long it took, or "hung". */
async function webhook(url: string, id: string, jobId: string) {
  const body = JSON.stringify({ jobId, state: "running", seq: 1 });
  const started = performance.now();
  try {
    const response = await fetch(`${url}/webhooks/acme`, {
      method: "POST",
      headers: signWith(SECRET, body, { id }),
      body,
      // Far beyond the deadline under test: a request still unanswered then hangs.
      signal: AbortSignal.timeout(10_000),
    });
    await response.arrayBuffer();
    return {
      status: response.status,
      type: response.headers.get("content-type"),
      ms: performance.now() - started,
    };
  } catch {
    return { status: "hung" as const, type: null, ms: performance.now() - started };
  }
}

describe("PostgreSQL gone silent under a serve", () => {
  const schema = uniqueSchemaName("finality_silent");
  // The serve's sessions carry this name, so that a test can end them on the server.
  const applicationName = `${schema}_serve`;
  let dir: TempDir;
  let service: RunningService;
  let proxy: Awaited<ReturnType<typeof freezableProxy>>;

  beforeAll(async () => {
    const target = new URL(POSTGRES_TEST_URL);
    proxy = await freezableProxy({ host: target.hostname, port: Number(target.port || 5432) });
    dir = tempDir("finality-pg-silent-");
    const file = dir.file("finality.json");
    writeFileSync(
      file,
      JSON.stringify({
        server: { host: "127.0.0.1", port: 0 },
        store: {
          postgres: proxy.url(`${POSTGRES_TEST_URL}?application_name=${applicationName}`),
          schema,
          connectTimeoutSeconds: 1,
          statementTimeoutSeconds: 1,
          queryTimeoutSeconds: 2,
        },
        providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } },
        log: { level: "silent" },
      }),
    );
    service = await serve({ configFile: file, flags: {}, env: {} });
  }, 60_000);
  afterAll(async () => {
    proxy?.thaw();
    await service?.stop();
    await proxy?.close();
    const admin = adminClient();
    await dropSchema(admin, schema);
    await admin.end();
    dir?.cleanup();
  });

  it("a webhook in flight is answered 503 problem+json at store.queryTimeoutSeconds, and its retry after the silence is recorded once", async () => {
    expect((await webhook(service.url, "msg_before", "job-1")).status).toBe(200);
    proxy.freeze();
    const during = await Promise.all([
      webhook(service.url, "msg_silent_1", "job-1"),
      webhook(service.url, "msg_silent_2", "job-2"),
    ]);
    proxy.thaw();
    for (const answer of during) {
      expect(answer.status).toBe(503);
      expect(answer.type).toContain("application/problem+json");
      // The 2 s deadline, not the 1 s statement_timeout (the server cannot send its cancel) and
      // not the silence's length.
      expect(answer.ms).toBeGreaterThanOrEqual(1900);
      // One deadline only: a ROLLBACK sent after it would queue behind the unanswered statement.
      expect(answer.ms).toBeLessThan(3500);
    }
    // The sender's retries, the database answering again: each recorded once.
    await expect
      .poll(async () => (await webhook(service.url, "msg_silent_1", "job-1")).status, { timeout: 10_000 })
      .toBe(200);
    expect((await webhook(service.url, "msg_silent_2", "job-2")).status).toBe(200);
    const admin = adminClient();
    try {
      const rows = await admin.unsafe<{ delivery_id: string; n: number }>(
        `SELECT delivery_id, count(*)::int AS n FROM "${schema}".events
         WHERE delivery_id LIKE 'msg_silent_%' GROUP BY delivery_id ORDER BY delivery_id`,
      );
      expect(rows.map((r) => [r.delivery_id, r.n])).toEqual([
        ["msg_silent_1", 1],
        ["msg_silent_2", 1],
      ]);
    } finally {
      await admin.end();
    }
  }, 60_000);

  it("a webhook that must open a new connection to the silent server is answered 503 at store.connectTimeoutSeconds, and its retry is recorded once", async () => {
    expect((await webhook(service.url, "msg_before_new", "job-3")).status).toBe(200);
    // Every pooled connection ended by the server (answered, not silent): the pool drops them,
    // so the next webhook has to open a new one, and the proxy is silent by then.
    const admin = adminClient();
    try {
      await admin.unsafe(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
        [applicationName],
      );
    } finally {
      await admin.end();
    }
    await expect.poll(() => proxy.open(), { timeout: 10_000 }).toBe(0);
    proxy.freeze();
    const answer = await webhook(service.url, "msg_silent_new", "job-3");
    const opened = proxy.open();
    proxy.thaw();
    expect(opened).toBeGreaterThan(0);
    expect(answer.status).toBe(503);
    expect(answer.type).toContain("application/problem+json");
    // The 1 s connect deadline, well before the 2 s query deadline (which a silent startup
    // handshake never reaches) and the 10 s this request would otherwise hang.
    expect(answer.ms).toBeGreaterThanOrEqual(900);
    expect(answer.ms).toBeLessThan(1900);
    await expect
      .poll(async () => (await webhook(service.url, "msg_silent_new", "job-3")).status, { timeout: 10_000 })
      .toBe(200);
    const check = adminClient();
    try {
      const rows = await check.unsafe<{ n: number }>(
        `SELECT count(*)::int AS n FROM "${schema}".events WHERE delivery_id = 'msg_silent_new'`,
      );
      expect(rows[0]?.n).toBe(1);
    } finally {
      await check.end();
    }
  }, 60_000);
});
