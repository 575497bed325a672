/**
 * `finality/client`: a typed client for Finality's API and worker API, with no runtime dependency:
 * node:http on Node, fetch elsewhere or when given one; its types come from the server's own zod
 * schemas.
 */
export type * from "./client-types.js";
export { createFinalityClient, type FinalityClient, type FinalityClientOptions } from "./finality-client.js";
export { type ClientErrorKind, FinalityClientError } from "./http-call.js";
