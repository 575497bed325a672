/**
 * A Node module hook (module.register) that swaps src/core/reducer.js for the mutant reducer, for
 * `npm run sim -- --mutant NAME`. Every importer gets the mutant; only the mutant's own `?real`
 * import reaches the real file.
 */
interface ResolveResult {
  url: string;
  format?: string | null;
  shortCircuit?: boolean;
}
type NextResolve = (specifier: string, context: unknown) => Promise<ResolveResult>;

const MUTANT_URL = new URL("./mutant-reducer.js", import.meta.url).href;

export async function resolve(
  specifier: string,
  context: unknown,
  next: NextResolve,
): Promise<ResolveResult> {
  const resolved = await next(specifier, context);
  if (resolved.url.endsWith("/src/core/reducer.js")) return { ...resolved, url: MUTANT_URL };
  return resolved;
}
