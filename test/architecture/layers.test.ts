import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

// The dependency rule of docs/architecture.md, checked on every relative import under src/:
// `core ← store ← engine/runs ← webhooks/providers ← http/dashboard ← host ← cli/cloudflare`.
// Folders on one tier may import each other; a folder may never import from a tier above it.

const TIERS = [
  ["core"],
  ["store"],
  ["engine", "runs"],
  ["webhooks", "providers"],
  ["http", "dashboard"],
  ["host"],
  ["cli", "cloudflare"],
];
const tierOf = new Map(TIERS.flatMap((folders, tier) => folders.map((folder) => [folder, tier] as const)));

/** Upward imports that are known and explained in docs/architecture.md ("Layers"). */
const EXPLAINED = new Set([
  // Outgoing effects are signed as Standard Webhooks with the same signer that tests inbound ones.
  "engine/http-effect-target.ts -> webhooks/signature-common.ts",
  "engine/http-effect-target.ts -> webhooks/web-standard-webhooks.ts",
]);

const SRC = resolve(import.meta.dirname, "../../src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

/** `from "./x.js"` and `import("./x.js")`, resolved to the .ts/.tsx file under src/. */
function relativeImports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)].map(
    (m) => m[1] as string,
  );
  return specifiers.map((specifier) => {
    const target = relative(SRC, resolve(dirname(file), specifier));
    return target.replace(/\.js$/, target.startsWith("dashboard/") ? ".tsx" : ".ts");
  });
}

const files = sourceFiles(SRC);
const folderOf = (path: string) => path.split("/")[0] as string;

describe("the dependency rule", () => {
  it("finds the source files and their imports (the check below is not vacuous)", () => {
    expect(files.length).toBeGreaterThan(100);
    const imports = files.flatMap(relativeImports);
    expect(imports.filter((path) => folderOf(path) === "core").length).toBeGreaterThan(50);
  });

  it("no folder imports from a tier above its own, apart from the explained exceptions", () => {
    const upward: string[] = [];
    for (const file of files) {
      const from = relative(SRC, file);
      const fromTier = tierOf.get(folderOf(from));
      if (fromTier === undefined) continue;
      for (const target of relativeImports(file)) {
        const toTier = tierOf.get(folderOf(target));
        if (toTier !== undefined && toTier > fromTier) upward.push(`${from} -> ${target}`);
      }
    }
    expect(upward.filter((edge) => !EXPLAINED.has(edge))).toEqual([]);
    // An exception that no longer exists should leave the list.
    expect([...EXPLAINED].filter((edge) => !upward.includes(edge))).toEqual([]);
  });

  it("keeps core free of node:* imports and of the system clock outside clock.ts", () => {
    for (const file of files.filter((path) => folderOf(relative(SRC, path)) === "core")) {
      const text = readFileSync(file, "utf8");
      expect(text, file).not.toMatch(/from\s+"node:/);
      expect(text, file).not.toMatch(/Math\.random\(/);
      if (!file.endsWith("clock.ts")) expect(text, file).not.toMatch(/Date\.now\(/);
    }
  });
});
