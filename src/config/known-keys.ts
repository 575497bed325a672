import type { z } from "zod";

/**
 * The keys a schema declares for the object at `path`, read from the schema itself, so that an
 * "unknown field" error can say "did you mean …" for any object of the configuration: a key
 * added to a schema is known here with no other change. `input` picks the variant of a
 * discriminated union (a provider's `type`), so a generic provider is not offered `apiKey`.
 */
export function knownKeysAt(schema: z.ZodType, path: readonly PropertyKey[], input: unknown): string[] {
  const keys = new Set<string>();
  for (const shape of shapesAt(schema, path, input)) for (const key of Object.keys(shape)) keys.add(key);
  return [...keys];
}

interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  options?: z.ZodType[];
  valueType?: z.ZodType;
  element?: z.ZodType;
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

function shapesAt(
  schema: z.ZodType,
  path: readonly PropertyKey[],
  input: unknown,
): Record<string, z.ZodType>[] {
  const def = defOf(schema);
  if (def.innerType) return shapesAt(def.innerType, path, input);
  if (def.type === "pipe" && def.in && def.out)
    return [...shapesAt(def.in, path, input), ...shapesAt(def.out, path, input)];
  if (def.type === "union" && def.options) {
    const matching = def.options.filter((option) => literalsMatch(option, input));
    return (matching.length > 0 ? matching : def.options).flatMap((option) => shapesAt(option, path, input));
  }
  if (path.length === 0) return def.type === "object" && def.shape ? [def.shape] : [];
  const [head, ...rest] = path;
  const child = isRecord(input) ? input[head as string] : undefined;
  if (def.type === "object" && def.shape) {
    const field = def.shape[head as string];
    return field ? shapesAt(field, rest, child) : [];
  }
  if (def.type === "record" && def.valueType) return shapesAt(def.valueType, rest, child);
  if (def.type === "array" && def.element)
    return shapesAt(def.element, rest, Array.isArray(input) ? input[head as number] : undefined);
  return [];
}

/** False when the option is an object whose literal field (a discriminator) differs from the input's. */
function literalsMatch(option: z.ZodType, input: unknown): boolean {
  const def = defOf(option);
  if (def.type !== "object" || !def.shape || !isRecord(input)) return true;
  for (const [key, field] of Object.entries(def.shape)) {
    const literal = defOf(field) as Def & { values?: unknown[] };
    if (literal.type === "literal" && literal.values && !literal.values.includes(input[key])) return false;
  }
  return true;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
