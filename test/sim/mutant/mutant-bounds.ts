import type * as Real from "../../../src/core/bounds.js";
import { mutateModule } from "./module-mutants.js";

// Loaded instead of src/core/bounds.js by mutant-hooks.ts; `?real` reaches the real module.
const mutant = mutateModule(
  "src/core/bounds.js",
  (await import(new URL("../../../src/core/bounds.js?real", import.meta.url).href)) as typeof Real,
);

export const { TIMESTAMP_BOUNDS, isTimestampInBounds, timestampOutOfBounds, checkTimestamp } = mutant;
