// Tests reach the engine's wiring (its store, clock, ingest contexts) as the internal modules do:
// through the accessor, never through the public `Finality` type.
export { engineOf, type FinalityEngine } from "../../src/engine/finality-engine.js";
