import { afterAll, describe, expect, it } from "vitest";
import { startService, tempDir } from "./helpers/service.js";
import { getJson, SECRET, sendWebhook } from "./helpers/webhooks.js";

const dir = tempDir();
afterAll(() => dir.cleanup());

describe("SIGTERM during load", () => {
  it("loses no acknowledged webhook: every 200 the client saw is in the database after restart", async () => {
    const db = dir.file("shutdown.db");
    const env = { FINALITY_WEBHOOK_SECRET: SECRET };
    const first = await startService({ db, env });

    const acknowledged: string[] = [];
    let refused = 0;
    let next = 0;
    let signalled = false;
    let acknowledgedWhenSignalled = 0;
    const SIGNAL_AFTER = 300;

    // 50 clients, each sending one fresh job's completion after another until the server is gone.
    async function client(): Promise<void> {
      for (;;) {
        const id = `load-${next++}`;
        try {
          const sent = await sendWebhook(first.url, "generic", { jobId: id, state: "succeeded", result: id });
          if (sent.status === 200) acknowledged.push(id);
          else refused++;
        } catch {
          return; // connection refused or reset: the server has stopped
        }
        if (!signalled && acknowledged.length >= SIGNAL_AFTER) {
          signalled = true;
          acknowledgedWhenSignalled = acknowledged.length;
          first.child.kill("SIGTERM");
        }
      }
    }
    const [exit] = await Promise.all([first.exited, ...Array.from({ length: 50 }, client)]);

    expect(exit).toEqual({ code: 0, signal: null });
    expect(acknowledged.length).toBeGreaterThanOrEqual(SIGNAL_AFTER);
    // The requests in flight at the signal were finished, not dropped (each still a fresh job).
    expect(acknowledged.length).toBeGreaterThan(acknowledgedWhenSignalled);
    expect(refused).toBe(0);
    console.log(`acknowledged ${acknowledgedWhenSignalled} before SIGTERM, ${acknowledged.length} in all`);

    const second = await startService({ db, env });
    try {
      const missing: string[] = [];
      for (const id of acknowledged) {
        const { status, body } = await getJson(`${second.url}/v1/jobs/generic/${id}`);
        if (status !== 200 || body.state !== "succeeded") missing.push(id);
      }
      expect(missing).toEqual([]);
    } finally {
      expect(await second.stop("SIGINT")).toEqual({ code: 0, signal: null });
    }
  });
});
