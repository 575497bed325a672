import { spawn } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { createFinality } from "../../src/exports/sqlite.js";
import { tempDir } from "../helpers/temp-dir.js";
import { CLI, runCli } from "../http/helpers/service.js";

// `finality settlements` (the built CLI, a real process) on a SQLite file another process writes.

describe("finality settlements", () => {
  const dir = tempDir("finality-settlements-cli-");
  const db = dir.file("ledger.db");
  afterAll(() => dir.cleanup());

  async function settle(ids: string[]): Promise<void> {
    const finality = createFinality({ store: { sqlite: db } });
    try {
      for (const id of ids)
        await finality.ingest({ provider: "acme", id, state: "succeeded", source: "webhook" });
    } finally {
      await finality.close();
    }
  }

  it("prints a page (text and --json) from a cursor, and refuses a bad one", async () => {
    await settle(["c1", "c2", "c3"]);
    const all = await runCli(["settlements", "--db", db, "--json"]);
    expect(all.code, all.stderr).toBe(0);
    const page = JSON.parse(all.stdout) as { items: { id: string; cursor: string }[]; cursor: string };
    expect(page.items.map((s) => s.id)).toEqual(["c1", "c2", "c3"]);
    expect(page.cursor).toBe(page.items[2]?.cursor);
    const text = await runCli([
      "settlements",
      "--db",
      db,
      "--after",
      page.items[0]?.cursor ?? "",
      "--limit",
      "1",
    ]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain("c2");
    expect(text.stdout).not.toContain("c3");
    expect(text.stdout).toContain(`cursor: ${page.items[1]?.cursor}`);
    const bad = await runCli(["settlements", "--db", db, "--after", "nonsense"]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("after");
  }, 60_000);

  /** `finality settlements --follow` from the current end of the feed: its lines as they come. */
  async function follow(json: boolean) {
    const page = JSON.parse((await runCli(["settlements", "--db", db, "--json"])).stdout) as {
      cursor: string;
    };
    const child = spawn(
      process.execPath,
      [CLI, "settlements", "--db", db, "--follow", ...(json ? ["--json"] : []), "--after", page.cursor],
      {
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...process.env, FINALITY_LOG_LEVEL: "warn" },
      },
    );
    const lines: string[] = [];
    let wake: () => void = () => {};
    child.stdout.on("data", (chunk: Buffer) => {
      lines.push(...chunk.toString().split("\n").filter(Boolean));
      wake();
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    void exited.then(() => wake());
    const until = async (n: number) => {
      while (lines.length < n) {
        if (child.exitCode !== null) throw new Error(`follow exited ${child.exitCode}: ${stderr}`);
        await new Promise<void>((resolve) => (wake = resolve));
      }
    };
    return { child, lines, until, exited };
  }

  it("--follow --json prints one line per settlement as they commit, until SIGTERM", async () => {
    const { child, lines, until, exited } = await follow(true);
    await settle(["f1", "f2"]);
    await until(2);
    await settle(["f3"]);
    await until(3);
    expect(lines.map((line) => (JSON.parse(line) as { id: string }).id)).toEqual(["f1", "f2", "f3"]);
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  }, 60_000);

  it("--follow in text prints the column names first, then one line per settlement", async () => {
    const { child, lines, until, exited } = await follow(false);
    await settle(["t1"]);
    await until(1);
    expect(lines[0]).toBe("CURSOR  PROVIDER  ID  STATE  SETTLED AT  BY");
    await until(2);
    expect(lines[1]).toMatch(/^\S+ {2}acme {2}t1 {2}succeeded {2}\d{4}-\d\d-\d\dT[\d:.]+Z {2}webhook$/);
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  }, 60_000);
});
