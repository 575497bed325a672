import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// What a user gets: `npm pack` ships only what runs, an install into a fresh folder brings only
// the runtime dependencies, and the bare `finality` command works there, after `npm install -g`,
// and through `npx finality` inside a checkout (npm runs the project's own bin).
// The installs use the local tarball and the npm registry (its cache first): no other network.

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  version: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  exports: Record<string, unknown>;
};

const work = mkdtempSync(join(tmpdir(), "finality-pack-"));
let tarball = "";
afterAll(() => rmSync(work, { recursive: true, force: true }));

beforeAll(async () => {
  // Scripts off: the tests run on a built tree, and prepack would remove the dist other test files use.
  const { stdout } = await run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work], {
    cwd: ROOT,
  });
  const [packed] = JSON.parse(stdout) as { filename: string }[];
  tarball = join(work, packed?.filename ?? "");
}, 120_000);

/**
 * npm install with the registry cache first. Without the packages in the cache and no way to
 * the registry, the install cannot be tested here: outside CI that is a skip that says so.
 */
async function install(args: string[], cwd: string, skip: (note: string) => void) {
  const started = Date.now();
  try {
    await run(
      "npm",
      ["install", "--ignore-scripts", "--prefer-offline", "--no-audit", "--no-fund", ...args],
      {
        cwd,
        env: { ...process.env, npm_config_update_notifier: "false" },
      },
    );
  } catch (error) {
    const message = (error as { stderr?: string }).stderr ?? String(error);
    if (!process.env.CI && /ENOTCACHED|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|network/i.test(message))
      skip(
        `npm could not reach the registry or its cache, so the install is not tested here: ${message.slice(0, 200)}`,
      );
    throw error;
  }
  return Date.now() - started;
}

function sizeOf(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.size;
  return readdirSync(path).reduce((sum, name) => sum + sizeOf(join(path, name)), 0);
}

describe("the package", () => {
  it("ships the built code, the migrations and the manifest: no sources, tests, maps or tooling", async () => {
    const { stdout } = await run("npm", ["pack", "--ignore-scripts", "--dry-run", "--json"], { cwd: ROOT });
    const files = (JSON.parse(stdout) as { files: { path: string }[] }[])[0]?.files.map((f) => f.path) ?? [];
    expect(files).toContain("dist/cli/main.js");
    expect(files).toContain("dist/index.d.ts");
    for (const dialect of ["sqlite", "postgres"])
      for (const migration of readdirSync(join(ROOT, "migrations", dialect)))
        expect(files).toContain(`migrations/${dialect}/${migration}`);
    const unexpected = files.filter(
      (path) =>
        !/^dist\/.+\.(js|d\.ts)$/.test(path) &&
        !/^migrations\/(sqlite|postgres)\/\d{4}_[a-z0-9_]+\.sql$/.test(path) &&
        !["package.json", "README.md", "LICENSE", "CHANGELOG.md"].includes(path),
    );
    expect(unexpected).toEqual([]);
  });

  it("installs into a fresh folder with its runtime dependencies only, and `finality` runs there", async (context) => {
    const app = join(work, "app");
    mkdirSync(app);
    writeFileSync(
      join(app, "package.json"),
      JSON.stringify({ name: "app", version: "1.0.0", private: true }),
    );
    const ms = await install([tarball], app, (note) => context.skip(note));
    const installed = readdirSync(join(app, "node_modules")).flatMap((name) =>
      name.startsWith("@")
        ? readdirSync(join(app, "node_modules", name)).map((sub) => `${name}/${sub}`)
        : [name],
    );
    for (const name of Object.keys(manifest.dependencies)) expect(installed).toContain(name);
    expect(installed.filter((name) => Object.hasOwn(manifest.devDependencies, name))).toEqual([]);
    // Not even what a development dependency pulls in: no TypeScript, no test runner, no SDK.
    for (const name of [
      "typescript",
      "vitest",
      "vite",
      "esbuild",
      "openai",
      "stripe",
      "@anthropic-ai/sdk",
      "miniflare",
    ])
      expect(installed).not.toContain(name);

    const { stdout } = await run(join(app, "node_modules/.bin/finality"), ["--version"], { cwd: app });
    expect(stdout.trim()).toBe(manifest.version);
    const help = await run(join(app, "node_modules/.bin/finality"), ["--help"], { cwd: app });
    expect(help.stdout).toContain("Usage: finality");
    // Every entry of "exports" imports from the installed package (test/package/entries.test.ts
    // checks which drivers each loads).
    const entries = Object.keys(manifest.exports).map((subpath) =>
      subpath === "." ? "finality" : `finality/${subpath.slice(2)}`,
    );
    const imported = await run(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        "for (const s of process.argv.slice(1)) console.log(s, Object.keys(await import(s)).length)",
        ...entries,
      ],
      { cwd: app },
    );
    expect(
      imported.stdout
        .trim()
        .split("\n")
        .map((line) => line.split(" ")[0]),
    ).toEqual(entries);
    // What the install costs, for README's install weight.
    const megabytes = sizeOf(join(app, "node_modules")) / 1e6;
    console.info(
      `install: ${installed.length} packages, ${megabytes.toFixed(1)} MB, ${(ms / 1000).toFixed(1)} s`,
    );
  }, 300_000);

  it("`npm install -g` puts the bare `finality` on the PATH", async (context) => {
    const prefix = join(work, "global");
    await install(["-g", "--prefix", prefix, tarball], work, (note) => context.skip(note));
    const { stdout } = await run(join(prefix, "bin/finality"), ["--version"]);
    expect(stdout.trim()).toBe(manifest.version);
  }, 300_000);
});

describe("inside a checkout", () => {
  it("`npx finality` runs the checkout's own CLI (npm runs the project's bin), from any folder in it", async () => {
    for (const cwd of [ROOT, join(ROOT, "test/cli")]) {
      const { stdout } = await run("npx", ["--offline", "finality", "--version"], { cwd });
      expect(stdout.trim(), relative(ROOT, cwd) || ".").toBe(manifest.version);
    }
  }, 120_000);
});

describe("the runtime code", () => {
  it("imports only runtime dependencies (provider SDKs and tooling are for tests only)", () => {
    const imported = new Set<string>();
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (/\.tsx?$/.test(entry.name))
          for (const match of readFileSync(path, "utf8").matchAll(
            /(?:from|import)\s*\(?\s*"([^".][^"]*)"/g,
          )) {
            const specifier = match[1] as string;
            if (specifier.startsWith("node:")) continue;
            const parts = specifier.split("/");
            imported.add(specifier.startsWith("@") ? `${parts[0]}/${parts[1]}` : (parts[0] as string));
          }
      }
    };
    walk(join(ROOT, "src"));
    expect(imported.size).toBeGreaterThan(5);
    const outside = [...imported].filter((name) => !Object.hasOwn(manifest.dependencies, name));
    expect(outside).toEqual([]);
  });
});
