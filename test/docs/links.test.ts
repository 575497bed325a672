import { existsSync, statSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { headingAnchors, linkTargets, manualFiles, ROOT, read, rel } from "./markdown.js";

/** A link to another site, or to a page the running service serves: not a file in the checkout. */
const EXTERNAL = /^(?:[a-z][a-z0-9+.-]*:|\/\/)/i;

function brokenLinks(): string[] {
  const broken: string[] = [];
  for (const file of manualFiles()) {
    for (const target of linkTargets(read(file))) {
      if (EXTERNAL.test(target)) continue;
      const [pathPart = "", anchor] = target.split("#", 2);
      const path = pathPart === "" ? file : resolve(dirname(file), decodeURIComponent(pathPart));
      if (!existsSync(path)) {
        broken.push(`${rel(file)}: ${target} (no file ${rel(path)})`);
        continue;
      }
      if (
        anchor &&
        path.endsWith(".md") &&
        statSync(path).isFile() &&
        !headingAnchors(read(path)).has(anchor)
      ) {
        broken.push(`${rel(file)}: ${target} (no heading #${anchor} in ${rel(path)})`);
      }
    }
  }
  return broken;
}

describe("the manual's links", () => {
  it("README, CONTRIBUTING, CHANGELOG, bench/README and docs/ exist", () => {
    for (const file of manualFiles()) expect(existsSync(file), rel(file)).toBe(true);
  });

  it("every relative link resolves to a file, and every #anchor to a heading", () => {
    expect(brokenLinks()).toEqual([]);
  });

  it("the manual is self-contained: no link or reference leaves the repository", () => {
    const pages = [...manualFiles(), resolve(ROOT, "test/README.md")];
    const outside = pages.flatMap((file) => {
      const text = read(file);
      const named = /\.\.\/shared\/|\bARCHITECTURE\.md\b/.test(text)
        ? [`${rel(file)} names a file outside the repository`]
        : [];
      const linked = linkTargets(text)
        .filter((target) => !EXTERNAL.test(target))
        .map((target) => resolve(dirname(file), decodeURIComponent(target.split("#", 1)[0] ?? "")))
        .filter((path) => relative(ROOT, path).startsWith(".."))
        .map((path) => `${rel(file)} links to ${path}`);
      return [...named, ...linked];
    });
    expect(outside).toEqual([]);
  });

  it("the anchors are GitHub's", () => {
    const anchors = headingAnchors(
      '# OpenAI — `type: "openai"`\n## A, b\n## A, b\n```\n# not a heading\n```',
    );
    expect([...anchors]).toEqual(["openai--type-openai", "a-b", "a-b-1"]);
  });

  it("README stays a page: the two commands, a map of the docs, under ~10 KB", () => {
    const readme = read(resolve(manualFiles()[0] ?? ""));
    expect(readme).toContain("npm install && npm start");
    expect(readme).toContain("npm test");
    expect(Buffer.byteLength(readme)).toBeLessThan(10_500);
  });
});
