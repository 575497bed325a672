import type { z } from "zod";

/** The parts of a zod 4 schema's definition that hold other schemas. */
interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  options?: z.ZodType[];
  valueType?: z.ZodType;
  element?: z.ZodType;
  getter?: () => z.ZodType;
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/**
 * Every key a configuration may hold, as dotted paths: a record's key is written `<name>`, an
 * array's element `[]` (`providers.<name>.webhook.secrets`, `effects[].url`). Unions (the store, the
 * provider types) give the keys of every branch. Walked from the schema itself, so a key added to
 * the schema is a key the documentation must name.
 */
export function schemaKeys(schema: z.ZodType, prefix = ""): string[] {
  const def = defOf(schema);
  switch (def.type) {
    case "object": {
      const keys: string[] = [];
      for (const [key, child] of Object.entries(def.shape ?? {})) {
        const path = prefix === "" ? key : `${prefix}.${key}`;
        keys.push(path, ...schemaKeys(child, path));
      }
      return keys;
    }
    case "default":
    case "prefault":
    case "optional":
    case "nullable":
    case "readonly":
    case "catch":
    case "nonoptional":
      return def.innerType ? schemaKeys(def.innerType, prefix) : [];
    case "pipe":
      return [...(def.in ? schemaKeys(def.in, prefix) : []), ...(def.out ? schemaKeys(def.out, prefix) : [])];
    case "union":
      return (def.options ?? []).flatMap((option) => schemaKeys(option, prefix));
    case "record":
      return def.valueType ? schemaKeys(def.valueType, `${prefix}.<name>`) : [];
    case "array":
      return def.element ? schemaKeys(def.element, `${prefix}[]`) : [];
    case "lazy":
      return def.getter ? schemaKeys(def.getter(), prefix) : [];
    default:
      return [];
  }
}

export function uniqueSchemaKeys(schema: z.ZodType): string[] {
  return [...new Set(schemaKeys(schema))];
}
