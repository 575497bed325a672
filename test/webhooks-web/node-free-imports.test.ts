import { readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// What runs on Workers must not reach a Node-only module, even through a chain of imports. Read
// from the sources (not by loading them): a `from "..."` or `import "..."` is followed when
// relative; type-only statements are skipped, since TypeScript erases them.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const NODE_ONLY_PACKAGES = ["better-sqlite3", "pino", "prom-client"];
const ENTRY_POINTS = [
  "src/webhooks/web-verifiers.ts",
  "src/webhooks/jwt-signature.ts",
  "src/providers/provider-registry.ts",
  "src/providers/create-provider-adapter.ts",
  "src/providers/test-webhook.ts",
  "src/host/workers/ledger-from-config.ts",
  "src/engine/http-effect-target.ts",
  "src/dashboard/dashboard-routes.ts",
];

const STATIC_IMPORT = /(?:^|[\n;])\s*(import|export)\s+(type\s+)?(?:[^;'"]*?\s+from\s+)?["']([^"']+)["']/g;
const DYNAMIC_IMPORT = /\bimport\(\s*["']([^"']+)["']\s*\)/g;

/** The specifiers a file imports at run time. */
function runtimeImports(source: string): string[] {
  const specifiers: string[] = [];
  for (const match of source.matchAll(STATIC_IMPORT))
    if (match[2] === undefined) specifiers.push(match[3] as string);
  for (const match of source.matchAll(DYNAMIC_IMPORT)) specifiers.push(match[1] as string);
  return specifiers;
}

/** `./x.js` as the TypeScript file it names. */
function sourceFile(from: string, specifier: string): string {
  const target = join(dirname(from), specifier);
  for (const candidate of [target.replace(/\.js$/, ".ts"), target.replace(/\.js$/, ".tsx"), target]) {
    try {
      readFileSync(candidate);
      return candidate;
    } catch {}
  }
  throw new Error(`${relative(ROOT, from)} imports ${specifier}, which was not found`);
}

function isNodeOnly(specifier: string): boolean {
  const bare = specifier.split("/")[0] as string;
  return (
    specifier.startsWith("node:") ||
    builtinModules.includes(specifier) ||
    builtinModules.includes(bare) ||
    NODE_ONLY_PACKAGES.some((name) => specifier === name || specifier.startsWith(`${name}/`))
  );
}

/** Every Node-only import reachable from `entry`, each with the chain of files that leads to it. */
function nodeOnlyImports(entry: string): string[] {
  const found: string[] = [];
  const visited = new Set<string>();
  const walk = (file: string, chain: string[]) => {
    if (visited.has(file)) return;
    visited.add(file);
    const here = [...chain, relative(ROOT, file)];
    for (const specifier of runtimeImports(readFileSync(file, "utf8"))) {
      if (specifier.startsWith(".")) walk(sourceFile(file, specifier), here);
      else if (isNodeOnly(specifier)) found.push(`${here.join(" → ")} → ${specifier}`);
    }
  };
  walk(join(ROOT, entry), []);
  return found;
}

describe("the Workers path imports nothing Node-only", () => {
  it.each(ENTRY_POINTS)("%s", (entry) => {
    expect(nodeOnlyImports(entry)).toEqual([]);
  });

  it("the walk finds a Node-only import where there is one", () => {
    expect(nodeOnlyImports("src/webhooks/node-verifiers.ts").join("\n")).toContain("node:crypto");
    expect(runtimeImports('import type { A } from "node:fs";\nexport type { B } from "pino";')).toEqual([]);
    expect(runtimeImports('import {\n  a,\n  b,\n} from "./x.js";\nimport "./y.js";')).toEqual([
      "./x.js",
      "./y.js",
    ]);
  });
});
