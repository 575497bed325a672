import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EffectReceiver } from "../helpers/receiver.js";
import { tempDir } from "../helpers/temp-dir.js";
import { sendWebhook } from "../http/helpers/webhooks.js";
import { SECRET, serveWith } from "./service-helpers.js";

const JOBS = 1000;

// Each process sends to its own address (`?via=a`, `?via=b`; the dispatcher takes the URL from its
// own configuration), so the receiver sees who delivered what: "between them" means both did.
const viaOf = (path: string) => new URL(path, "http://receiver.invalid").searchParams.get("via");

describe("two dispatchers on one SQLite file", () => {
  const dir = tempDir();
  const receiver = new EffectReceiver(SECRET);
  beforeAll(() => receiver.listen());
  afterAll(async () => {
    await receiver.close();
    dir.cleanup();
  });

  it("deliver each of 1,000 effects exactly once between them, and lose none", async () => {
    const db = dir.file("shared.db");
    const config = (via: string) => ({
      providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } },
      effects: [{ name: "notify", url: `${receiver.url}?via=${via}`, secret: SECRET }],
    });
    const a = await serveWith(dir, db, config("a"), "a.json");
    const b = await serveWith(dir, db, config("b"), "b.json");
    const sent: Promise<number>[] = [];
    for (let i = 0; i < JOBS; i++) {
      const target = i % 2 === 0 ? a : b;
      sent.push(
        sendWebhook(target.url, "acme", { jobId: `job-${i}`, state: "succeeded" }).then((r) => r.status),
      );
      if (sent.length % 100 === 0) await Promise.all(sent.slice(-100));
    }
    expect((await Promise.all(sent)).every((status) => status === 200)).toBe(true);
    await receiver.until(() => receiver.applied.size === JOBS);
    await Promise.all([a.stop("SIGTERM"), b.stop("SIGTERM")]);
    expect(receiver.deliveries).toHaveLength(JOBS);
    const jobs = new Set(receiver.deliveries.map((d) => d.body.job.id));
    expect(jobs.size).toBe(JOBS);
    const byA = receiver.deliveries.filter((d) => viaOf(d.path) === "a").length;
    const byB = receiver.deliveries.filter((d) => viaOf(d.path) === "b").length;
    expect(byA + byB).toBe(JOBS);
    expect(byA).toBeGreaterThan(0);
    expect(byB).toBeGreaterThan(0);
    // 1,000 webhooks through two processes: ~50 s on the 2-core VM under load, so more than the default 60 s.
  }, 180_000);
});
