import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { isTerminal } from "../../src/core/states.js";
import { createFinality } from "../../src/engine/create-finality.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/store/store.js";
import { type Child, startNodeChild } from "../helpers/child-process.js";
import { outboxRowsByJob, raceJobId, raceObservations, type Side } from "../helpers/race.js";
import { type TempDir, tempDir } from "../helpers/temp-dir.js";

const JOBS = 200;
const CHUNK = 10;
const SIDES: Side[] = ["a", "b"];
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CHILD_SCRIPT = fileURLToPath(new URL("../helpers/ingest-child.mjs", import.meta.url));

/** The race's outcome, read back through the port from a fresh connection. */
async function expectOneSettlementPerJob(store: Store): Promise<void> {
  const outbox = await outboxRowsByJob(store);
  const perSide = raceObservations("a", 1).length;
  const states = new Map<string, number>();
  for (let i = 0; i < JOBS; i++) {
    const key = { provider: "generic", id: raceJobId(i) };
    const job = await store.getJob(key);
    expect(job, key.id).not.toBeNull();
    expect(isTerminal(job!.state), `${key.id} is ${job!.state}`).toBe(true);
    states.set(job!.state, (states.get(job!.state) ?? 0) + 1);
    expect(i % 2 === 0 ? ["succeeded", "failed"] : ["succeeded"]).toContain(job!.state);
    // Even jobs saw both succeeded and failed: whichever came second is the conflict.
    expect(job!.conflict).toBe(i % 2 === 0);
    expect(outbox.get(key.id) ?? 0, `outbox rows of ${key.id}`).toBe(1);
    const events = await store.jobEvents(key);
    expect(events).toHaveLength(2 * perSide);
    expect(events.filter((e) => e.applied && isTerminal(e.state))).toHaveLength(1);
    expect(events.filter((e) => e.reason === "duplicate-delivery")).toHaveLength(1);
  }
  expect(outbox.size).toBe(JOBS);
  // The trigger-kept counts agree with the rows, whichever writer wrote them.
  const stats = await store.stats(Date.now());
  expect(stats.jobsByState).toEqual(Object.fromEntries(states));
  expect(Object.values(stats.effectsByStatus).reduce((a, b) => a + b, 0)).toBe(JOBS);
}

describe("SQLite: two writers race terminal observations of the same jobs", () => {
  let dir: TempDir;
  let path: string;
  beforeEach(() => {
    dir = tempDir("finality-race-");
    path = dir.file("ledger.db");
  });
  afterEach(() => dir.cleanup());

  it("two store instances in one process write one outbox row per job", async () => {
    const stores = SIDES.map(() => createSqliteStore({ path }));
    let settled = 0;
    const ingestSide = async (store: Store, side: Side) => {
      const finality = createFinality({ store, effects: [{ name: "notify", handler: async () => {} }] });
      const observations = raceObservations(side, JOBS);
      for (let i = 0; i < observations.length; i += CHUNK) {
        const outcomes = await Promise.all(observations.slice(i, i + CHUNK).map((o) => finality.ingest(o)));
        settled += outcomes.filter((o) => o.settled).length;
      }
    };
    try {
      await Promise.all(stores.map((store, i) => ingestSide(store, SIDES[i]!)));
      expect(settled).toBe(JOBS);
      const reader = createSqliteStore({ path });
      await expectOneSettlementPerJob(reader).finally(() => reader.close());
    } finally {
      for (const store of stores) await store.close();
    }
  });

  describe("two processes running the built package", () => {
    beforeAll(() => {
      // `npm test` builds first; a bare `vitest run` on a fresh clone builds here.
      if (!existsSync(`${ROOT}dist/index.js`))
        execFileSync(
          process.execPath,
          [`${ROOT}node_modules/typescript/bin/tsc`, "-p", "tsconfig.build.json"],
          {
            cwd: ROOT,
          },
        );
    });

    it("write one outbox row per job", async () => {
      await createSqliteStore({ path }).close(); // migrate once, so that the race is about ingest
      const children: Child[] = SIDES.map(() => startNodeChild(CHILD_SCRIPT, [path, String(CHUNK)]));
      try {
        for (const [i, child] of children.entries())
          child.send(JSON.stringify(raceObservations(SIDES[i]!, JOBS)));
        for (const child of children) expect(await child.nextLine()).toBe("ready");
        for (const child of children) child.send("go");
        const reports = await Promise.all(children.map(async (child) => JSON.parse(await child.nextLine())));
        await Promise.all(children.map((child) => child.exited));
        for (const report of reports) expect(report.ingested).toBe(raceObservations("a", JOBS).length);
        // Each job settled once, in one process or the other.
        expect(reports[0].settled + reports[1].settled).toBe(JOBS);
        const reader = createSqliteStore({ path });
        await expectOneSettlementPerJob(reader).finally(() => reader.close());
      } finally {
        for (const child of children) child.kill();
      }
    });
  });
});
