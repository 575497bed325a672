import { writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningService, serve } from "../../src/host/node/serve.js";
import {
  adminClient,
  dropSchema,
  POSTGRES_TEST_URL,
  postgresSuite,
  uniqueSchemaName,
} from "../helpers/postgres.js";
import { type TempDir, tempDir } from "../helpers/temp-dir.js";
import { SECRET, sendWebhook } from "../http/helpers/webhooks.js";

// The PostgreSQL group commit's counters in a real `serve`'s /metrics: concurrent webhooks on a
// replica with one group in flight at a time (poolSize 2) share transactions, and the scrape says
// how many groups, how many callers went through them, and the retries by reason.
await postgresSuite("group commit metrics");

/** The value of one sample line of the exposition, or undefined. */
function sample(body: string, name: string, labels = ""): number | undefined {
  const prefix = labels === "" ? `${name} ` : `${name}{${labels}} `;
  const line = body.split("\n").find((l) => l.startsWith(prefix));
  return line === undefined ? undefined : Number(line.slice(prefix.length));
}

const scrape = async (url: string) => (await fetch(`${url}/metrics`)).text();

describe("group commit metrics", () => {
  const schema = uniqueSchemaName("finality_leftovers_gc_metrics");
  let dir: TempDir;
  let service: RunningService;

  beforeAll(async () => {
    dir = tempDir("finality-group-commit-metrics-");
    const file = dir.file("finality.json");
    writeFileSync(
      file,
      JSON.stringify({
        server: { host: "127.0.0.1", port: 0 },
        // One group in flight at a time, collected for 100 ms: concurrent webhooks wait together.
        store: { postgres: POSTGRES_TEST_URL, schema, poolSize: 2, groupCommitMaxWaitMs: 100 },
        providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } },
        log: { level: "silent" },
      }),
    );
    service = await serve({ configFile: file, flags: {}, env: {} });
  }, 60_000);
  afterAll(async () => {
    await service?.stop();
    const admin = adminClient();
    await dropSchema(admin, schema);
    await admin.end();
    dir?.cleanup();
  });

  it("counts batches, batched callers, the largest batch and retries by reason", async () => {
    const before = await scrape(service.url);
    expect(sample(before, "finality_group_commit_batches_total")).toBe(0);
    expect(sample(before, "finality_group_commit_callers_total")).toBe(0);
    for (const reason of ["deadlock", "serialization", "version-conflict"])
      expect(sample(before, "finality_group_commit_retries_total", `reason="${reason}"`)).toBe(0);

    const sent = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        sendWebhook(service.url, "acme", { jobId: `job-${i}`, state: "succeeded" }),
      ),
    );
    expect(sent.map((s) => s.status)).toEqual(Array(20).fill(200));

    const after = await scrape(service.url);
    const batches = sample(after, "finality_group_commit_batches_total") ?? 0;
    const callers = sample(after, "finality_group_commit_callers_total") ?? 0;
    const largest = sample(after, "finality_group_commit_largest_batch") ?? 0;
    expect(batches).toBeGreaterThanOrEqual(1);
    expect(largest).toBeGreaterThanOrEqual(2);
    // Each batch holds at least two callers and at most all twenty webhooks.
    expect(callers).toBeGreaterThanOrEqual(2 * batches);
    expect(callers).toBeGreaterThanOrEqual(largest);
    expect(callers).toBeLessThanOrEqual(20);
    // Distinct jobs: nothing to retry.
    expect(sample(after, "finality_group_commit_retries_total", 'reason="deadlock"')).toBe(0);

    // A scrape adds only what is new: with no ingest between them, two scrapes agree.
    const again = await scrape(service.url);
    expect(sample(again, "finality_group_commit_batches_total")).toBe(batches);
    expect(sample(again, "finality_group_commit_callers_total")).toBe(callers);
  }, 60_000);
});
