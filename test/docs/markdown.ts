import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** README, CONTRIBUTING, CHANGELOG, bench/README and every page under docs/: the manual. */
export function manualFiles(): string[] {
  const files = ["README.md", "CONTRIBUTING.md", "CHANGELOG.md", "bench/README.md"].map((f) => join(ROOT, f));
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".md")) files.push(path);
    }
  };
  walk(join(ROOT, "docs"));
  return files;
}

export function rel(path: string): string {
  return relative(ROOT, path);
}

/** The text outside fenced code blocks, so a `](x)` inside an example is not taken for a link. */
export function proseOf(markdown: string): string {
  let inFence = false;
  return markdown
    .split("\n")
    .filter((line) => {
      if (line.startsWith("```")) inFence = !inFence;
      return !inFence && !line.startsWith("```");
    })
    .join("\n");
}

/** Every `[text](target)` and `![alt](target)` link's target, inline code spans removed first. */
export function linkTargets(markdown: string): string[] {
  const prose = proseOf(markdown).replace(/`[^`\n]*`/g, "");
  return [...prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1] ?? "");
}

/** The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces to "-", repeats numbered. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseOf(markdown).split("\n")) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading?.[1]) continue;
    const base = heading[1]
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

export function read(path: string): string {
  return readFileSync(path, "utf8");
}
