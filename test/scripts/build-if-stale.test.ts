import { mkdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BUILT, BUNDLED, buildIfStale, staleReason } from "../../scripts/build-if-stale.mjs";
import { tempDir } from "../helpers/temp-dir.js";

// `npm run demo` builds only when dist/ is older than what it is built from (issue 30, item 6).

const dir = tempDir();
afterAll(() => dir.cleanup());

let n = 0;
/** A checkout with one source file and a build, each at the given time (seconds since the epoch). */
function checkout(times: { source: number; built?: number; tsconfig?: number; bundled?: number }): string {
  const root = join(dir.path, `checkout-${n++}`);
  const put = (path: string, at: number) => {
    const file = join(root, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, "");
    utimesSync(file, at, at);
  };
  put("src/engine/deep/module.ts", times.source);
  put("tsconfig.json", times.tsconfig ?? 1000);
  if (times.built !== undefined) put(BUILT, times.built);
  // The bundle step writes its list just after main.js.
  const bundled = times.bundled ?? times.built;
  if (bundled !== undefined) put(BUNDLED, bundled);
  return root;
}

describe("build only when dist/ is stale", () => {
  it("builds when dist/ is missing", () => {
    const builds: string[] = [];
    const code = buildIfStale(
      checkout({ source: 2000 }),
      () => builds.push("build") && 0,
      () => {},
    );
    expect(code).toBe(0);
    expect(builds).toEqual(["build"]);
  });

  it("builds when a source file deep under src/ is newer than the build, and names it", () => {
    const root = checkout({ source: 3000, built: 2000 });
    expect(staleReason(root)).toBe(`src/engine/deep/module.ts is newer than ${BUILT}`);
    const builds: string[] = [];
    const said: string[] = [];
    expect(
      buildIfStale(
        root,
        () => builds.push("build") && 7,
        (line) => said.push(line),
      ),
    ).toBe(7);
    expect(builds).toEqual(["build"]);
    expect(said).toEqual([`building: src/engine/deep/module.ts is newer than ${BUILT}`]);
  });

  it("builds when a tsconfig is newer than the build", () => {
    expect(staleReason(checkout({ source: 1000, tsconfig: 3000, built: 2000 }))).toBe(
      `tsconfig.json is newer than ${BUILT}`,
    );
  });

  it("builds when tsc's main.js was never bundled (the build stopped after tsc)", () => {
    const reason = `${BUILT} is not bundled (the last build stopped before scripts/bundle-cli.mjs finished)`;
    expect(staleReason(checkout({ source: 1000, built: 2000, bundled: 1500 }))).toBe(reason);
    const root = join(dir.path, `checkout-${n++}`);
    mkdirSync(join(root, "dist", "cli"), { recursive: true });
    writeFileSync(join(root, BUILT), "");
    expect(staleReason(root)).toBe(reason);
  });

  it("does not build when dist/ is newer than every input", () => {
    const root = checkout({ source: 1000, built: 2000 });
    expect(staleReason(root)).toBeNull();
    const builds: string[] = [];
    const said: string[] = [];
    expect(
      buildIfStale(
        root,
        () => builds.push("build") && 1,
        (line) => said.push(line),
      ),
    ).toBe(0);
    expect(builds).toEqual([]);
    expect(said[0]).toContain("not rebuilding");
  });

  it("is what `npm run demo` runs before the demo", () => {
    const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { scripts: Record<string, string> };
    expect(pkg.scripts.demo).toBe("node scripts/build-if-stale.mjs && node dist/cli/main.js demo");
  });
});
