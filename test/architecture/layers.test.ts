import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

// The dependency rule of docs/architecture.md, checked on every relative import under src/:
// `core ← config ← store ← engine/runs ← webhooks/providers ← http ← dashboard ← app ← host ← cli/cloudflare/exports`.
// Folders on one tier may import each other (but not in a cycle, see below); a folder may never
// import from a tier above it.

const TIERS = [
  ["core"],
  ["config"],
  ["store"],
  ["engine", "runs"],
  ["webhooks", "providers"],
  ["http"],
  ["dashboard"],
  ["app"],
  ["host"],
  ["cli", "cloudflare", "exports"],
];
const tierOf = new Map(TIERS.flatMap((folders, tier) => folders.map((folder) => [folder, tier] as const)));

/** Upward imports that are known and explained in docs/architecture.md ("Layers"). */
const EXPLAINED = new Set([
  // Outgoing effects are signed as Standard Webhooks with the same signer that tests inbound ones.
  "engine/http-effect-target.ts -> webhooks/schemes/standard-webhooks/header.ts",
  "engine/http-effect-target.ts -> webhooks/schemes/standard-webhooks/web.ts",
]);

/**
 * Folder cycles that are known and not yet undone: none. (`http` ↔ `dashboard` went when the app
 * that mounts both moved to `app/create-app.ts`.) A new cycle fails the test.
 */
const KNOWN_FOLDER_CYCLES: string[][] = [];

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

/** The folders under src/ and, for each, the folders its files import (type-only imports too). */
function folderGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of files) {
    const from = folderOf(relative(SRC, file));
    if (!from.includes(".")) {
      const edges = graph.get(from) ?? new Set<string>();
      graph.set(from, edges);
      for (const target of relativeImports(file)) {
        const to = folderOf(target);
        if (to !== from && !to.includes(".")) edges.add(to);
      }
    }
  }
  return graph;
}

/** Each group of two or more folders that import one another round a cycle (Tarjan's SCCs). */
function folderCycles(graph: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (folder: string) => {
    index.set(folder, index.size);
    low.set(folder, index.get(folder) as number);
    stack.push(folder);
    for (const next of graph.get(folder) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(folder, Math.min(low.get(folder) as number, low.get(next) as number));
      } else if (stack.includes(next)) {
        low.set(folder, Math.min(low.get(folder) as number, index.get(next) as number));
      }
    }
    if (low.get(folder) !== index.get(folder)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop() as string;
      group.push(member);
    } while (member !== folder);
    if (group.length > 1) cycles.push(group.sort());
  };
  for (const folder of graph.keys()) if (!index.has(folder)) visit(folder);
  return cycles;
}

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

  it("no folders under src/ import one another round a cycle", () => {
    const graph = folderGraph();
    expect(graph.get("host")).toContain("config");
    expect(folderCycles(graph)).toEqual(KNOWN_FOLDER_CYCLES);
  });

  it("the cycle check finds a cycle where there is one", () => {
    const graph = new Map([
      ["a", new Set(["b"])],
      ["b", new Set(["c"])],
      ["c", new Set(["a"])],
      ["d", new Set(["a"])],
    ]);
    expect(folderCycles(graph)).toEqual([["a", "b", "c"]]);
    // The real graph with the config → providers edge it had (the provider schema) put back.
    const real = folderGraph();
    real.get("config")?.add("providers");
    expect(folderCycles(real)).toContainEqual(["config", "providers"]);
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
