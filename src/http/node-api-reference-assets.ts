import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { ApiReferenceAssets } from "./api-reference-routes.js";

/**
 * Swagger UI's files from the installed swagger-ui-dist package, read once each and kept: the
 * reference page works offline, from this server alone. Node only (the Node host passes it).
 */
export function nodeApiReferenceAssets(): ApiReferenceAssets {
  const dir = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
  const cache = new Map<string, Promise<Uint8Array | null>>();
  return (name) => {
    let file = cache.get(name);
    if (file === undefined) {
      file = readFile(join(dir, name)).then(
        (bytes) => new Uint8Array(bytes),
        () => null,
      );
      cache.set(name, file);
    }
    return file;
  };
}
