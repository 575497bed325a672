import { writeFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, tempDir } from "../http/helpers/service.js";
import { SECRET } from "../http/helpers/webhooks.js";

// `finality jobs wait`: the built CLI on a SQLite file, its exit code saying how the wait ended.
// The settling observation comes from another `finality` process, as it would from `serve`.

const dir = tempDir();
afterAll(() => dir.cleanup());
const config = dir.file("finality.config.json");
writeFileSync(
  config,
  JSON.stringify({ providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } } }),
);
const db = dir.file("ledger.db");
const cli = (...args: string[]) => runCli([...args, "--config", config, "--db", db]);

describe("finality jobs wait", () => {
  it("exits 4 for a job still open at --timeout, 0 once it succeeded, 3 when it settled otherwise, 1 when unknown", async () => {
    expect((await cli("migrate")).code).toBe(0);
    expect((await cli("jobs", "register", "acme", "w-1")).code).toBe(0);
    const open = await cli("jobs", "wait", "acme", "w-1", "--timeout", "1", "--json");
    expect(open.code).toBe(4);
    expect(JSON.parse(open.stdout)).toMatchObject({ id: "w-1", state: "pending", settledAt: null });

    // A wait in progress, settled by another process: woken (by the store's poll of the file).
    const waiting = cli("jobs", "wait", "acme", "w-1", "--timeout", "60");
    expect((await cli("jobs", "observe", "acme", "w-1", "succeeded")).code).toBe(0);
    const settled = await waiting;
    expect(settled.code).toBe(0);
    expect(settled.stdout).toContain("succeeded");

    expect((await cli("jobs", "observe", "acme", "w-2", "failed")).code).toBe(0);
    expect((await cli("jobs", "wait", "acme", "w-2")).code).toBe(3);

    const unknown = await cli("jobs", "wait", "acme", "nobody", "--timeout", "1");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("no job acme/nobody");
  }, 60_000);
});
