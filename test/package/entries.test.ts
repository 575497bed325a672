import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

// Each entry of package.json "exports", imported by name in a fresh Node process from the built
// tree (the package refers to itself by its name): which database drivers it loads. `finality`
// is the engine and its types and must load neither driver; only `finality/sqlite` may load
// better-sqlite3, only `finality/postgres` pg.

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  name: string;
  exports: Record<string, { types: string; default: string }>;
};

/** The drivers (as require.cache holds them: both are CommonJS) loaded by importing `specifier`. */
async function driversLoadedBy(
  specifier: string,
): Promise<{ sqlite: boolean; pg: boolean; exported: number }> {
  const script = `
    const entry = await import(process.argv[1]);
    const { createRequire } = await import("node:module");
    const loaded = Object.keys(createRequire(process.cwd() + "/").cache);
    const has = (name) => loaded.some((path) => path.includes("/node_modules/" + name + "/"));
    console.log(JSON.stringify({ sqlite: has("better-sqlite3"), pg: has("pg"), exported: Object.keys(entry).length }));
  `;
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script, specifier], {
    cwd: ROOT,
  });
  return JSON.parse(stdout);
}

const EXPECTED: Record<string, { sqlite: boolean; pg: boolean }> = {
  ".": { sqlite: false, pg: false },
  "./sqlite": { sqlite: true, pg: false },
  "./postgres": { sqlite: false, pg: true },
  "./webhooks": { sqlite: false, pg: false },
  "./client": { sqlite: false, pg: false },
  "./brokers": { sqlite: false, pg: false },
  "./worker-client": { sqlite: false, pg: false },
  "./cloudflare": { sqlite: false, pg: false },
};

describe("the package's entries", () => {
  it("are the ones listed here, each built with its types", () => {
    expect(Object.keys(manifest.exports).sort()).toEqual(Object.keys(EXPECTED).sort());
    for (const target of Object.values(manifest.exports)) {
      expect(existsSync(join(ROOT, target.default)), target.default).toBe(true);
      expect(existsSync(join(ROOT, target.types)), target.types).toBe(true);
    }
  });

  it("have no aliases: `finality/worker` and `finality/workers` (one letter apart) are gone", () => {
    expect(manifest.exports["./worker"]).toBeUndefined();
    expect(manifest.exports["./workers"]).toBeUndefined();
  });

  it.each(Object.entries(EXPECTED))("%s loads only the driver it is for", async (subpath, drivers) => {
    const specifier = subpath === "." ? manifest.name : `${manifest.name}/${subpath.slice(2)}`;
    const loaded = await driversLoadedBy(specifier);
    expect(loaded.exported).toBeGreaterThan(0);
    expect({ sqlite: loaded.sqlite, pg: loaded.pg }).toEqual(drivers);
  });
});
