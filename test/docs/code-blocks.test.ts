import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkBlocks, codeBlocks } from "./code-blocks.js";
import { manualFiles, ROOT, read, rel } from "./markdown.js";

// Every ```js / ```ts block of README.md and docs/ compiles against the package's own types.
// A block that cannot (another SDK's signature, a shape with `...`) is marked
// `<!-- fragment: why -->` on the line before it; FRAGMENTS below lists them, so a new opt-out is
// a visible change to this file and not a quiet one in a page.

const FRAGMENTS = [
  "docs/providers-research.md:167", // OpenAI SDK's `unwrap` signature, quoted from its source
  "docs/providers-research.md:189", // a test snippet of the OpenAI SDK, with the body and headers elided
  "docs/providers-research.md:305", // Anthropic SDK's `unwrap` signature, quoted
  "docs/providers-research.md:491", // Replicate's `validateWebhook` signatures, quoted
];

const pages = manualFiles().filter((file) => !file.endsWith("CHANGELOG.md"));
const blocks = pages.flatMap((file) => codeBlocks(file, read(file)));

describe("the manual's code blocks", () => {
  it("finds the blocks, and opts out only the listed fragments", () => {
    expect(blocks.length).toBeGreaterThan(5);
    const fragments = blocks.filter((b) => b.fragment !== null).map((b) => `${rel(b.file)}:${b.line}`);
    expect(fragments).toEqual(FRAGMENTS);
  });

  it("a block marked `<!-- runnable: <test file> ... -->` names a test that exists and finds it by that marker", () => {
    const runnable = blocks.filter((b) => b.marker?.startsWith("<!-- runnable:"));
    expect(runnable.length).toBeGreaterThan(0);
    for (const block of runnable) {
      const test = /^<!-- runnable: (\S+)/.exec(block.marker ?? "")?.[1] ?? "";
      expect(existsSync(join(ROOT, test)), `${rel(block.file)}:${block.line} names ${test}`).toBe(true);
      expect(readFileSync(join(ROOT, test), "utf8")).toContain(`<!-- runnable: ${test}`);
    }
  });

  it("type-check against the package's types", () => {
    const failures = checkBlocks(blocks).map((f) => `${f.where}: ${f.message}`);
    expect(failures).toEqual([]);
  }, 120_000);
});
