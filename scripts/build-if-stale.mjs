// `npm run demo` rebuilt dist/ every time (most of a minute of its wait). This builds only when
// dist/ is missing or older than what it is built from: any file under src/, a tsconfig, the
// bundle script or package.json (its build script).
import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

/** The file whose time stands for the build: tsc writes every output on each build. */
export const BUILT = join("dist", "cli", "main.js");
/** Written by scripts/bundle-cli.mjs after it has bundled BUILT: older than BUILT, the bundle step failed. */
export const BUNDLED = join("dist", "cli", "bundle-inputs.json");
const INPUTS = ["src", "tsconfig.json", "tsconfig.build.json", "scripts/bundle-cli.mjs", "package.json"];

/** Why `root`'s dist/ needs a build (the newest input), or null when it is up to date. */
export function staleReason(root) {
  let built;
  try {
    built = statSync(join(root, BUILT)).mtimeMs;
  } catch {
    return `${BUILT} is missing`;
  }
  let bundled;
  try {
    bundled = statSync(join(root, BUNDLED)).mtimeMs;
  } catch {
    bundled = -1;
  }
  if (bundled < built)
    return `${BUILT} is not bundled (the last build stopped before scripts/bundle-cli.mjs finished)`;
  const newest = newestFile(root, INPUTS);
  if (newest !== null && newest.mtimeMs > built)
    return `${relative(root, newest.path)} is newer than ${BUILT}`;
  return null;
}

function newestFile(root, names) {
  let newest = null;
  for (const name of names) {
    const path = join(root, name);
    let stat;
    try {
      stat = statSync(path);
    } catch {
      continue;
    }
    const candidate = stat.isDirectory()
      ? newestFile(path, readdirSync(path))
      : { path, mtimeMs: stat.mtimeMs };
    if (candidate !== null && (newest === null || candidate.mtimeMs > newest.mtimeMs)) newest = candidate;
  }
  return newest;
}

/** Runs `build` when dist/ is stale; says which it did. Returns the build's exit code (0 when skipped). */
export function buildIfStale(root, build, say = (line) => process.stderr.write(`${line}\n`)) {
  const reason = staleReason(root);
  if (reason === null) {
    say(`dist/ is up to date with src/: not rebuilding (npm run build forces it)`);
    return 0;
  }
  say(`building: ${reason}`);
  return build();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = fileURLToPath(new URL("..", import.meta.url));
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  process.exitCode = buildIfStale(
    root,
    () => spawnSync(npm, ["run", "build"], { cwd: root, stdio: "inherit" }).status ?? 1,
  );
}
