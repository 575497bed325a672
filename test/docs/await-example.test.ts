import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../helpers/temp-dir.js";
import { ROOT } from "./markdown.js";

// docs/library.md's "Awaiting one job" example, run as it is written: the block after the marker
// is saved as a module beside a node_modules where `finality` is this checkout (built by
// `npm test` before the tests), and run with Node on a fresh SQLite file.

const MARKER = "<!-- await-one-job -->";

function exampleCode(): string {
  const text = readFileSync(join(ROOT, "docs/library.md"), "utf8");
  if (!text.includes(MARKER)) throw new Error(`no ${MARKER} in docs/library.md`);
  const block = /```js\n([\s\S]*?)```/.exec(text.slice(text.indexOf(MARKER)))?.[1];
  if (!block) throw new Error(`no js block after ${MARKER}`);
  return block;
}

describe("docs/library.md: awaiting one job", () => {
  it("submits through an intent, awaits the job and prints its result", async () => {
    const dir = tempDir("finality-await-example-");
    const modules = join(dir.path, "node_modules");
    mkdirSync(modules);
    symlinkSync(ROOT, join(modules, "finality"));
    const file = join(dir.path, "await.mjs");
    writeFileSync(file, exampleCode());
    const child = spawn(process.execPath, [file], {
      env: { ...process.env, LEDGER: dir.file("ledger.db") },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout.trim()).toMatch(
      /^render-\S+ succeeded \{"url":"https:\/\/cdn\.example\/render-\S+\.png"\}$/,
    );
    dir.cleanup();
  }, 60_000);
});
