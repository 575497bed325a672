import type { JobPlan } from "./sim-types.js";

const cache = new WeakMap<JobPlan, unknown>();

/** The value a job's terminal step carries: built once per job (a large one is megabytes). */
export function payloadValue(plan: JobPlan): unknown {
  if (cache.has(plan)) return cache.get(plan);
  const { payload } = plan;
  const value =
    payload.shape === "small"
      ? { output: `${plan.id}.png`, frames: 3 }
      : payload.shape === "large"
        ? { blob: "x".repeat(payload.bytes) }
        : JSON.parse(`${"[".repeat(payload.depth)}${"]".repeat(payload.depth)}`);
  cache.set(plan, value);
  return value;
}

const jsonCache = new WeakMap<JobPlan, string>();

/** The value's JSON text, built without JSON.stringify (which overflows its stack 20,000 levels deep). */
export function payloadJson(plan: JobPlan): string {
  const cached = jsonCache.get(plan);
  if (cached !== undefined) return cached;
  const { payload } = plan;
  const text =
    payload.shape === "deep"
      ? `${"[".repeat(payload.depth)}${"]".repeat(payload.depth)}`
      : JSON.stringify(payloadValue(plan));
  jsonCache.set(plan, text);
  return text;
}

/** The `"result":…` or `"error":…` member of a webhook body, or nothing. */
export function payloadMember(plan: JobPlan, state: string): string {
  if (state === "succeeded") return `,"result":${payloadJson(plan)}`;
  if (state === "failed") return `,"error":${payloadJson(plan)}`;
  return "";
}

/** `result` for a success, `error` for a failure, nothing otherwise. */
export function payloadFields(plan: JobPlan, state: string): { result?: unknown; error?: unknown } {
  if (state === "succeeded") return { result: payloadValue(plan) };
  if (state === "failed") return { error: payloadValue(plan) };
  return {};
}

/** Whether this plan's value must be stored as the marked stand-in (all large and deep ones are past the bounds). */
export function mustBeTruncated(plan: JobPlan): boolean {
  return plan.payload.shape !== "small";
}
