import { attachSchema, intentSchema } from "../core/validation.js";
import { attachedIntentSchema, intentAnswerSchema, intentListSchema } from "./intent-api-schemas.js";
import { listQuerySchema } from "./intent-routes.js";
import type { RouteDoc } from "./openapi/route-doc.js";

const keyParam = {
  key: { description: "the application's own key for the submission; `/` is sent as `%2F`" },
};

/** The intents routes in /openapi.json (see openapi/route-doc.ts). */
export const INTENT_ROUTE_DOCS: RouteDoc[] = [
  {
    method: "post",
    path: "/v1/intents",
    operationId: "recordIntent",
    tag: "intents",
    summary: "Record an intent before calling the provider",
    description:
      "The same body again (metadata compared as JSON, key order aside) is the same intent, 200. " +
      "Another body under the key is 409 `conflict` with `reason: intent-key-reused`.",
    auth: "api",
    body: { schema: intentSchema },
    responses: {
      201: { description: "recorded", schema: intentAnswerSchema },
      200: { description: "recorded before, with the same body", schema: intentAnswerSchema },
    },
    errors: ["conflict", "unknown-provider"],
  },
  {
    method: "get",
    path: "/v1/intents",
    operationId: "listIntents",
    tag: "intents",
    summary: "List intents, newest first",
    auth: "api",
    query: listQuerySchema,
    responses: { 200: { description: "the intents (`limit` defaults to 50)", schema: intentListSchema } },
  },
  {
    method: "get",
    path: "/v1/intents/{key}",
    operationId: "getIntent",
    tag: "intents",
    summary: "Read an intent",
    auth: "api",
    params: keyParam,
    responses: { 200: { description: "the intent", schema: intentAnswerSchema } },
    errors: ["not-found", "invalid-request"],
  },
  {
    method: "post",
    path: "/v1/intents/{key}/attach",
    operationId: "attachIntent",
    tag: "intents",
    summary: "Attach the remote id the provider answered",
    description:
      "Registers the job with the intent's kind and metadata (a job adopted first is the same job). " +
      "The same id again is 200 and changes nothing; another id, or an id attached to another " +
      "intent, is 409 `conflict`.",
    auth: "api",
    params: keyParam,
    body: { schema: attachSchema },
    responses: { 200: { description: "the intent and its job", schema: attachedIntentSchema } },
    errors: ["not-found", "conflict", "unknown-provider"],
  },
];
