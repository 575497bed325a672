import { writeFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { prune } from "../../src/cli/housekeeping-commands.js";
import { parseConfig } from "../../src/config/load-config.js";
import { isFinalityError } from "../../src/core/errors.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { makeJob } from "../helpers/records.js";
import { type TempDir, tempDir } from "../helpers/temp-dir.js";

const DAY = 86_400_000;
let dir: TempDir | null = null;
afterEach(() => {
  dir?.cleanup();
  dir = null;
});

describe("retention windows of tombstones and parked observations", () => {
  /** A ledger file with a job settled 20 days ago and an observation parked 2 days ago. */
  async function ledgerFile(): Promise<string> {
    dir = tempDir();
    const path = dir.file("ledger.db");
    const store = createSqliteStore({ path });
    const now = Date.now();
    await store.transaction(async (tx) => {
      await tx.insertJob(
        makeJob({ provider: "acme", id: "old", state: "succeeded", settledAt: now - 20 * DAY }),
      );
      await tx.parkObservation(
        { provider: "acme", id: "early", state: "succeeded", source: "webhook" },
        now - 2 * DAY,
      );
    });
    await store.close();
    return path;
  }

  function configFile(path: string, retention: Record<string, number>): string {
    const file = dir?.file("finality.json") ?? "";
    writeFileSync(file, JSON.stringify({ store: { sqlite: path }, retention }));
    return file;
  }

  it("`finality prune` keeps them for the configured days", async () => {
    const path = await ledgerFile();
    const run = (retention: Record<string, number>) =>
      prune({ configFile: configFile(path, retention), env: {}, flags: {}, dryRun: true });
    // Defaults: 400 days of tombstones, 7 days of parked observations.
    expect((await run({})).rows).toMatchObject({ settledJobs: 1, tombstones: 0, parked: 0 });
    expect((await run({ parkedDays: 1 })).rows).toMatchObject({ parked: 1 });

    const pass = (retention: Record<string, number>) =>
      prune({ configFile: configFile(path, retention), env: {}, flags: {}, dryRun: false });
    const tombstone = async () => {
      const store = createSqliteStore({ path });
      try {
        return await store.getTombstone({ provider: "acme", id: "old" });
      } finally {
        await store.close();
      }
    };
    // Kept 30 days from settling: the job goes, its tombstone (20 days old) stays.
    expect((await pass({ tombstonesDays: 30 })).rows).toMatchObject({
      settledJobs: 1,
      tombstones: 0,
      parked: 0,
    });
    expect(await tombstone()).toMatchObject({ state: "succeeded" });
    // Kept 15 (jobs kept 1 day, redeliveries 1 day: 15 covers both): it goes too; and parked
    // observations kept 1 day go.
    expect(
      (await pass({ settledJobsDays: 1, deliveriesDays: 1, tombstonesDays: 15, parkedDays: 1 })).rows,
    ).toMatchObject({
      tombstones: 1,
      parked: 1,
    });
    expect(await tombstone()).toBeNull();
    const store = createSqliteStore({ path });
    try {
      expect((await store.listParked({})).items).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it("a tombstone window shorter than the settled jobs' (or equal to it) is refused", () => {
    const refused = (() => {
      try {
        return parseConfig({ retention: { settledJobsDays: 30, tombstonesDays: 20 } }, {});
      } catch (error) {
        return error;
      }
    })();
    expect(isFinalityError(refused, "invalid-config")).toBe(true);
    expect(String((refused as Error).message)).toContain("retention.tombstonesDays");
    // Equal: one pass would delete the job and its tombstone (tombstone-cover.test.ts has the rest).
    expect(() => parseConfig({ retention: { settledJobsDays: 30, tombstonesDays: 30 } }, {})).toThrow(
      "retention.settledJobsDays (30)",
    );
    expect(
      parseConfig({ retention: { settledJobsDays: 30, tombstonesDays: 37 } }, {}).retention,
    ).toMatchObject({
      tombstonesDays: 37,
      parkedDays: 7,
    });
  });
});
