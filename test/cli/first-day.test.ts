import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, cleanEnv, runCli, tempDir } from "../http/helpers/service.js";

// What a new user met on the first day (issue 30), each through the real built CLI.

const dir = tempDir();
afterAll(() => dir.cleanup());
const ledgerDb = dir.file("ledger.db");
beforeAll(async () => {
  expect((await runCli(["migrate", "--db", ledgerDb])).code).toBe(0);
});

/** The CLI with a stdout whose reader has gone before the first write, as in `... | head -1`. */
function runIntoClosedPipe(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: cleanEnv({}),
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout.destroy();
  let stderr = "";
  child.stderr.on("data", (data: Buffer) => {
    stderr += data.toString();
  });
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stderr })));
}

describe("output into a closed pipe", () => {
  it.each([[["jobs", "list"]], [["effects", "list"]], [["jobs", "list", "--json"]]])(
    "%j ends with 0 and no EPIPE stack trace",
    async (args) => {
      const result = await runIntoClosedPipe([...args, "--db", ledgerDb]);
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
    },
  );
});

describe("usage errors", () => {
  it.each([
    [["jobs", "lst"]],
    [["jobs", "list", "--bogus"]],
    [["jobs", "list", "--limit", "abc"]],
    [["nope"]],
  ])("%j prints the error and a pointer to --help, not the whole help", async (args) => {
    const result = await runCli(args);
    expect(result.code).toBe(2);
    const lines = result.stderr.trim().split("\n");
    expect(lines[0]).toMatch(/^error: /);
    expect(lines.at(-1)).toBe("(see `finality --help`, or `finality <command> --help`)");
    expect(lines.length).toBeLessThanOrEqual(3);
    expect(result.stderr).not.toContain("Usage:");
  });
});

describe("finality migrate", () => {
  it("needs no provider API key: it touches the store alone", async () => {
    const config = dir.file("openai.config.json");
    writeFileSync(
      config,
      JSON.stringify({ providers: { oa: { type: "openai", apiKey: "env:OPENAI_API_KEY" } } }),
    );
    const fresh = dir.file("migrated.db");
    const result = await runCli(["migrate", "--config", config, "--db", fresh]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`${fresh}: migrated, up to date\n`);
  });
});
