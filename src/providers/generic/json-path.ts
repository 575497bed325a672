/**
 * Reads `a.b.0.c` (or `$.a.b[0].c`) from a JSON value: object keys and array indexes, nothing
 * more. Undefined when any step is missing. Enough to point at a field in a status API's answer
 * without code, and nothing that could run code or reach outside the value.
 */
export function readJsonPath(value: unknown, path: string): unknown {
  const steps = path
    .replace(/^\$\.?/, "")
    .replace(/\[(\d+)\]/g, ".$1")
    .split(".")
    .filter((step) => step !== "");
  let current: unknown = value;
  for (const step of steps) {
    if (Array.isArray(current) && /^\d+$/.test(step)) current = current[Number(step)];
    else if (typeof current === "object" && current !== null && Object.hasOwn(current, step))
      current = (current as Record<string, unknown>)[step];
    else return undefined;
  }
  return current;
}
