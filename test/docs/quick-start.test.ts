import { execFile } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Service, startService, tempDir } from "../http/helpers/service.js";
import { codeBlocks } from "./code-blocks.js";
import { ROOT, read } from "./markdown.js";

// README's quick start as a reader follows it: the `look.mjs` block is saved at the checkout's
// root (where `finality/client` resolves to the package itself, built in dist/) and run with Node
// against `finality serve` with no configuration file; only the address is changed.

const run = promisify(execFile);
const MARKER = "<!-- runnable: test/docs/quick-start.test.ts";
const userFile = join(ROOT, `look-${process.pid}.mjs`);
let service: Service;
const dir = tempDir();

beforeAll(async () => {
  service = await startService({ db: dir.file("ledger.db") });
});
afterAll(async () => {
  rmSync(userFile, { force: true });
  await service?.stop();
  dir.cleanup();
});

describe("README's quick start", () => {
  it("look.mjs registers a pending job and prints its events", async () => {
    const readme = join(ROOT, "README.md");
    const block = codeBlocks(readme, read(readme)).find((b) => b.marker?.startsWith(MARKER));
    if (!block) throw new Error(`no block after ${MARKER} in README.md`);
    writeFileSync(userFile, block.code.replaceAll("http://127.0.0.1:8787", service.url));
    const { stdout, stderr } = await run(process.execPath, [userFile], { cwd: ROOT });
    expect(stderr).toBe("");
    expect(stdout.split("\n")[0]).toBe("true pending");
    expect(stdout).toContain("source: 'api'");
  });
});
