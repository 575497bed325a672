import type * as Real from "../../../src/core/reducer.js";
import { isMutantName, MUTANTS } from "./mutants.js";

// Loaded instead of src/core/reducer.js by mutant-hooks.ts; `?real` reaches the real module.
const real = (await import(
  new URL("../../../src/core/reducer.js?real", import.meta.url).href
)) as typeof Real;
const name = process.env.FINALITY_SIM_MUTANT ?? "";
if (!isMutantName(name)) throw new Error(`unknown mutant "${name}"`);

export const register = real.register;
export const reduce = MUTANTS[name](real.reduce);
