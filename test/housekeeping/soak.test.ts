import { statSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { manualClock } from "../../src/core/clock.js";
import { createFinality } from "../../src/engine/create-finality.js";
import { createDispatcher } from "../../src/engine/dispatcher.js";
import { DEFAULT_RETENTION, pruneOnce } from "../../src/engine/retention.js";
import { engineOf } from "../helpers/engine.js";
import { tempDir } from "../helpers/temp-dir.js";

const DAY = 86_400_000;
const DAYS = 60;
const JOBS_PER_DAY = 200;
// Tombstones are kept 400 days by default, so with the defaults the file would grow (by their
// ~160 B a job) for 400 days before it levels off; here they are kept 21 days, so that every
// window is full inside the 60 days. bench/prune.bench.js measures their size per million jobs.
const WINDOWS = { ...DEFAULT_RETENTION, tombstonesDays: 21 };

describe("60 simulated days of steady traffic", () => {
  const dir = tempDir();
  afterAll(() => dir.cleanup());

  it("keep the SQLite file's size level instead of growing with the traffic", async () => {
    const clock = manualClock(Date.UTC(2026, 0, 1));
    const file = dir.file("soak.db");
    const finality = createFinality({
      store: { sqlite: file },
      clock,
      effects: [{ name: "notify", handler: async () => {} }],
    });
    const dispatcher = createDispatcher(finality);
    const sizes: number[] = [];
    const payload = { text: "x".repeat(400) };
    for (let day = 0; day < DAYS; day++) {
      const start = clock.now();
      for (let i = 0; i < JOBS_PER_DAY; i++) {
        // Spread over the day: each hour's jobs are ingested together, like concurrent webhooks.
        if (i % 10 === 0) clock.set(start + (i / JOBS_PER_DAY) * DAY);
        const id = `d${day}-j${i}`;
        await Promise.all([
          finality.register({ provider: "acme", id, kind: "render", metadata: { day } }),
          finality.ingest({
            provider: "acme",
            id,
            state: "running",
            source: "webhook",
            deliveryId: `${id}-1`,
            seq: 1,
          }),
          finality.ingest({
            provider: "acme",
            id,
            state: "succeeded",
            source: "webhook",
            deliveryId: `${id}-2`,
            seq: 2,
            result: payload,
          }),
        ]);
      }
      await dispatcher.runOnce();
      clock.set(start + DAY);
      await pruneOnce(engineOf(finality).store, WINDOWS, clock.now());
      sizes.push((await engineOf(finality).store.housekeepingStats()).sizeBytes);
    }
    await finality.close();
    const kib = (bytes: number) => Math.round(bytes / 1024);
    console.log(
      `database size by simulated day (KiB), ${JOBS_PER_DAY} jobs/day, windows ${JSON.stringify(WINDOWS)}:`,
    );
    console.log(
      sizes
        .map((s, day) => (day % 5 === 4 ? `day ${day + 1}: ${kib(s)}` : null))
        .filter(Boolean)
        .join(" | "),
    );
    console.log(`file on disk after close: ${kib(statSync(file).size)} KiB`);
    // Retention windows end at most 21 days after a job settles: from then on, each day deletes what it adds.
    const atDay20 = sizes[19] as number;
    const atDay60 = sizes[59] as number;
    expect(atDay60).toBeLessThanOrEqual(atDay20 * 1.15);
    // Without pruning the size would have tripled between day 20 and day 60.
    expect(atDay60).toBeLessThan((sizes[9] as number) * 3);
  }, 240_000); // 36,000 transactions: about 20 s alone, several times that on a loaded machine
});
