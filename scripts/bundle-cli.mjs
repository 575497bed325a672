#!/usr/bin/env node
/**
 * Replaces tsc's dist/cli/main.js with one ES module bundle of the CLI (run by `npm run build`,
 * after tsc). The library keeps tsc's files, module per module; the CLI — what `finality serve`
 * runs — loads one file at start instead of ~400 modules.
 *
 * Why: every ES module costs a Node process ~40 KiB of memory that stays (measured with 300 small
 * modules), and `import { z } from "zod"` loads zod's 50 locales whether or not they are used
 * (+10 MiB). Bundled, the modules are one, and the locales nobody names are left out.
 * Idle RSS of `serve`: 91 MiB → 81 MiB (bench/README.md, "Memory: the CLI as one bundle").
 *
 * What stays outside the bundle: packages with native code or worker files (better-sqlite3, pino),
 * those `serve` imports only when its configuration names them (pg, the brokers, OpenTelemetry,
 * jose, the AWS signer: the lazy-modules test checks that they load only then), CommonJS ones
 * and swagger-ui-dist (its files are served as they are). Our own lazy imports (the dashboard's
 * pages, the PostgreSQL store, the broker targets) become chunks beside main.js, loaded on first
 * use as before. Chunks sit in dist/cli/ like main.js, so `new URL("../../…", import.meta.url)`
 * (package.json, the migrations) finds the same files from any of them.
 *
 * dist/cli/bundle-inputs.json records which source modules each output holds: the lazy-modules
 * test reads it to tell what a chunk it saw loaded contains.
 */
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";

const root = new URL("..", import.meta.url).pathname;
const out = join(root, "dist/cli");

const EXTERNAL = [
  "better-sqlite3",
  "pino",
  "prom-client",
  "commander",
  "uuidv7",
  "pg",
  "nats",
  "amqplib",
  "ioredis",
  "@opentelemetry/*",
  "jose",
  "@smithy/*",
  "@aws-crypto/*",
  "@noble/*",
  "swagger-ui-dist",
];

const BANNER = "// The CLI as one bundle: scripts/bundle-cli.mjs.";
if (readFileSync(join(out, "main.js"), "utf8").includes(BANNER)) {
  console.error("dist/cli/main.js is the bundle already (its chunks would be lost): run `npm run build`.");
  process.exit(1);
}

// A rebuild's chunks have new hashes: the old ones go first.
for (const name of readdirSync(out)) if (/^chunk-.*\.js(\.map)?$/.test(name)) rmSync(join(out, name));

const result = await build({
  absWorkingDir: root,
  entryPoints: ["dist/cli/main.js"],
  outdir: "dist/cli",
  allowOverwrite: true,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  external: EXTERNAL,
  chunkNames: "chunk-[hash]",
  banner: { js: BANNER },
  // tsc's source maps are read and carried through: a stack trace still names src/.
  sourcemap: "linked",
  metafile: true,
  logLevel: "warning",
});

const inputs = Object.fromEntries(
  Object.entries(result.metafile.outputs)
    .filter(([file]) => file.endsWith(".js"))
    .map(([file, output]) => [file.replace(/^dist\/cli\//, ""), Object.keys(output.inputs).sort()]),
);
writeFileSync(join(out, "bundle-inputs.json"), `${JSON.stringify(inputs, null, 1)}\n`);
