// Module hooks for record-imports.mjs (they run on the loader thread).
import { appendFileSync } from "node:fs";

let out;

export function initialize(data) {
  out = data.out;
}

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  if (out) appendFileSync(out, `${resolved.url}\n`);
  return resolved;
}
