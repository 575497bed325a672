/**
 * `finality/client`: a typed fetch client for Finality's API and worker API. No runtime
 * dependency beyond fetch; its types come from the server's own zod schemas.
 */
export type * from "./client-types.js";
export { createFinalityClient, type FinalityClient, type FinalityClientOptions } from "./finality-client.js";
export { type ClientErrorKind, FinalityClientError } from "./http-call.js";
