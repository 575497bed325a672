import { execFile } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "./markdown.js";

// README's quick start has the user save `look.mjs` in the checkout: a file of theirs, in their
// style, that the project's lint (Biome, `npm test`) must leave alone. Biome checks only the
// project's own folders (biome.json `files.includes`).

const run = promisify(execFile);
const userFile = join(ROOT, `look-${process.pid}.mjs`);
afterAll(() => rmSync(userFile, { force: true }));

describe("the project's lint", () => {
  it("ignores a user's file saved at the checkout's root", async () => {
    writeFileSync(userFile, "const x = {a:1}\nconsole.log( x )\n");
    const biome = join(ROOT, "node_modules/.bin/biome");
    const { stdout, stderr } = await run(biome, ["check", "--no-errors-on-unmatched", userFile], {
      cwd: ROOT,
    })
      .then((r) => r)
      .catch((error: { stdout: string; stderr: string }) => {
        throw new Error(`biome checked the user's file:\n${error.stdout}${error.stderr}`);
      });
    expect(`${stdout}${stderr}`).not.toContain(`look-${process.pid}.mjs`);
  });
});
