/**
 * A Node module hook (module.register) that swaps one module of src/ for its mutant, for `npm run
 * sim -- --mutant NAME`: src/core/reducer.js for a reducer mutant, or the module a module mutant
 * names (module-mutants.ts). Every importer gets the mutant; only the mutant's own `?real` import
 * reaches the real file.
 */
interface ResolveResult {
  url: string;
  format?: string | null;
  shortCircuit?: boolean;
}
type NextResolve = (specifier: string, context: unknown) => Promise<ResolveResult>;

/** The module swapped, and the file of its mutant (next to this one), as sim-cli.ts registers them. */
export interface HookData {
  module: string;
  mutant: string;
}

let swap: HookData = { module: "src/core/reducer.js", mutant: "./mutant-reducer.js" };

export async function initialize(data: HookData | undefined): Promise<void> {
  if (data !== undefined) swap = data;
}

export async function resolve(
  specifier: string,
  context: unknown,
  next: NextResolve,
): Promise<ResolveResult> {
  const resolved = await next(specifier, context);
  if (resolved.url.endsWith(`/${swap.module}`))
    return { ...resolved, url: new URL(swap.mutant, import.meta.url).href };
  return resolved;
}
