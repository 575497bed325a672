import { chmodSync, readdirSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { backup } from "../../src/cli/housekeeping-commands.js";
import { openStore } from "../../src/host/node/finality-from-config.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { tempDir } from "../helpers/temp-dir.js";

// A ledger this process may not write. As root every file is writable, so the check runs with
// the effective uid of `nobody` (the real uid stays root, so it can switch back).
const NOBODY = 65534;

async function asAnotherUser<T>(work: () => Promise<T>): Promise<T> {
  const root = process.geteuid?.() === 0;
  if (root) process.seteuid?.(NOBODY);
  try {
    return await work();
  } finally {
    if (root) process.seteuid?.(0);
  }
}

async function openError(path: string): Promise<Error> {
  return asAnotherUser(async () => {
    try {
      await (await openStore({ sqlite: path, synchronous: "FULL" })).close();
    } catch (error) {
      return error as Error;
    }
    throw new Error("the store opened");
  });
}

describe("a SQLite ledger this user cannot write", () => {
  const dir = tempDir();
  afterAll(() => {
    chmodSync(dir.path, 0o700);
    dir.cleanup();
  });

  it("a read-only file: the error names the file, its owner and mode, and who asked", async () => {
    const path = dir.file("readonly.db");
    await createSqliteStore({ path }).close();
    chmodSync(path, 0o444);
    chmodSync(dir.path, 0o777);
    const error = await openError(path);
    expect(error.message).not.toContain("attempt to write a readonly database");
    expect(error.message).toContain(`${path} is not writable by this process`);
    expect(error.message).toContain("mode 0444");
    expect(error.message).toContain("run the command as the user that runs `finality serve`");
    expect((error as { code?: string }).code).toBe("store-unavailable");
  });

  it("a directory where the -wal and -shm files cannot be created: the error says so", async () => {
    const path = dir.file("lockeddir.db");
    chmodSync(dir.path, 0o755);
    await createSqliteStore({ path }).close();
    chmodSync(path, 0o666);
    const error = await openError(path);
    expect(error.message).toContain(`cannot create files in ${dir.path}`);
    expect(error.message).toContain("lockeddir.db-wal and lockeddir.db-shm");
  });
});

describe("finality backup", () => {
  const dir = tempDir();
  afterAll(() => dir.cleanup());

  it("leaves one file beside the copy: no -wal, no -shm", async () => {
    const source = dir.file("live.db");
    await createSqliteStore({ path: source }).close();
    const target = dir.file("copy.db");
    const result = await backup({ flags: { db: source }, env: {}, target });
    expect(result.integrity).toBe("ok");
    expect(readdirSync(dir.path).filter((name) => name.startsWith("copy.db"))).toEqual(["copy.db"]);
  });
});
