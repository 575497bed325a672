import { fileURLToPath } from "node:url";
import { build } from "esbuild";

/**
 * Bundles a Worker entry the way wrangler does (esbuild, ES modules, browser-like platform, the
 * `workerd` export condition) into one module for Miniflare. No `nodejs_compat`: a `node:` import
 * on the Worker's path fails the build here, as it would in the runtime.
 */
export async function bundleWorker(entry: URL, alias: Record<string, string> = {}): Promise<string> {
  const result = await build({
    entryPoints: [fileURLToPath(entry)],
    bundle: true,
    write: false,
    format: "esm",
    platform: "browser",
    conditions: ["workerd", "worker", "browser"],
    target: "es2022",
    external: ["cloudflare:*"],
    alias,
    logLevel: "silent",
  });
  const [output] = result.outputFiles;
  if (output === undefined) throw new Error(`esbuild produced nothing for ${entry}`);
  return output.text;
}
