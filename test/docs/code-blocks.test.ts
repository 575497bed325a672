import { describe, expect, it } from "vitest";
import { checkBlocks, codeBlocks } from "./code-blocks.js";
import { manualFiles, read, rel } from "./markdown.js";

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

  it("type-check against the package's types", () => {
    const failures = checkBlocks(blocks).map((f) => `${f.where}: ${f.message}`);
    expect(failures).toEqual([]);
  }, 120_000);
});
