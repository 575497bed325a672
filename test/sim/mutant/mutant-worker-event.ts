import type * as Real from "../../../src/runs/worker-event.js";
import { mutateModule } from "./module-mutants.js";

// Loaded instead of src/runs/worker-event.js by mutant-hooks.ts; `?real` reaches the real module.
const mutant = mutateModule(
  "src/runs/worker-event.js",
  (await import(new URL("../../../src/runs/worker-event.js?real", import.meta.url).href)) as typeof Real,
);

export const { WORKER_EVENT_TYPES, checkFence, workerEventApplies, applyWorkerEvent, mayRetry } = mutant;
