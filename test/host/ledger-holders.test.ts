import { existsSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { afterAll, describe, expect, it } from "vitest";
import { holdLedger, liveHolders, refuseWhileHeld } from "../../src/host/node/ledger-holders.js";
import { tempDir } from "../helpers/temp-dir.js";

// The liveness check behind `finality restore`'s refusal: a record counts only while its process
// lives, and a pid given to another process since (same pid, other start time) is not it.

const dir = tempDir("finality-holders-");
afterAll(() => dir.cleanup());

/** A record as another process would write it. */
function record(db: string, pid: number, extra: Record<string, unknown> = {}): string {
  const file = `${db}.pid-${pid}`;
  const holder = { pid, host: hostname(), command: "serve", startedAt: "2026-01-01T00:00:00.000Z", ...extra };
  writeFileSync(file, JSON.stringify(holder));
  return file;
}

describe("who holds a ledger", () => {
  it("counts a live process (the test's parent), naming it in the refusal", () => {
    const db = dir.file("live.db");
    record(db, process.ppid);
    expect(liveHolders(db).map((h) => h.pid)).toEqual([process.ppid]);
    expect(() => refuseWhileHeld(db, "restore")).toThrow(
      new RegExp(`restore: .*live\\.db is open in pid ${process.ppid} \\(finality serve, since`),
    );
  });

  it("drops the record of a pid that now belongs to another process (its start time differs)", () => {
    const db = dir.file("reused.db");
    const file = record(db, process.ppid, { processStart: "1" });
    expect(liveHolders(db)).toEqual([]);
    expect(existsSync(file)).toBe(false);
  });

  it("drops the record of a process that is gone", () => {
    const db = dir.file("gone.db");
    // Past the kernel's pid_max (4194304 at most): no process has it.
    const file = record(db, 4_194_305);
    expect(liveHolders(db)).toEqual([]);
    expect(existsSync(file)).toBe(false);
  });

  it("counts a process on another host as live: it cannot be checked from here", () => {
    const db = dir.file("remote.db");
    record(db, 4_194_305, { host: `not-${hostname()}` });
    expect(() => refuseWhileHeld(db, "restore")).toThrow(/pid 4194305 on not-/);
  });

  it("writes this process's own record, ignores it when asked, and removes it on release", () => {
    const db = dir.file("own.db");
    const held = holdLedger(db);
    expect(existsSync(`${db}.pid-${process.pid}`)).toBe(true);
    expect(liveHolders(db)).toEqual([]);
    held.release();
    expect(existsSync(`${db}.pid-${process.pid}`)).toBe(false);
  });
});
