import * as z from "zod";
import type { RouteDoc } from "./openapi/route-doc.js";
import { settlementPageSchema } from "./settlement-api-schemas.js";
import {
  MAX_WAIT_SECONDS,
  settlementListQuerySchema,
  settlementStreamQuerySchema,
} from "./settlement-routes.js";

/**
 * settlement-routes.ts in /openapi.json. The stream's body is described as text with its event
 * format in words: OpenAPI 3.1 has no schema for a Server-Sent Events stream, and each event's
 * `data:` is a `Settlement` (the component the page's items reference).
 */
export const SETTLEMENT_ROUTE_DOCS: RouteDoc[] = [
  {
    method: "get",
    path: "/v1/settlements",
    operationId: "listSettlements",
    tag: "settlements",
    summary: "Read the settlement feed (a page, or a long poll with `wait`)",
    description:
      "Every job settlement (its first terminal state) in commit order, oldest first, after the " +
      "cursor `after` (none: from the start). Pass the answer's `cursor` back as `after`: a reader " +
      "that does misses nothing and sees nothing twice. With `wait=<seconds>` " +
      `(at most ${MAX_WAIT_SECONDS}) and nothing new, the answer comes as soon as a settlement ` +
      "commits (on any replica), or empty at the deadline or when the server stops. A cursor the " +
      'server did not give is 400 `invalid-request` with `field: "after"`.',
    auth: "api",
    query: settlementListQuerySchema,
    responses: {
      200: {
        description: "a page of the feed (empty when nothing newer matched)",
        schema: settlementPageSchema,
      },
    },
  },
  {
    method: "get",
    path: "/v1/settlements/stream",
    operationId: "streamSettlements",
    tag: "settlements",
    summary: "Follow the settlement feed as Server-Sent Events",
    description:
      "The same feed as `listSettlements`, as a `text/event-stream` that stays open: first the " +
      "settlements after the cursor, then each one as it commits. Each is one event " +
      "`id: <cursor>`, `event: settlement`, `data: <one Settlement as JSON>`. The stream opens " +
      "with `retry: 2000` and a comment; an idle stream sends a `: heartbeat` comment every 15 s " +
      "so that proxies keep it open. On a reconnect `EventSource` sends `Last-Event-ID`, which " +
      "wins over `after`. A bad `after` or `Last-Event-ID` is 400 `invalid-request` (naming which) " +
      "before the stream starts; when the server stops or the store fails the stream ends, and the " +
      "client reconnects with its last id.",
    auth: "api",
    query: settlementStreamQuerySchema,
    headers: {
      "Last-Event-ID": {
        description: "the `id:` of the last event received: resume after it (wins over `after`)",
      },
    },
    responses: {
      200: {
        description: "the stream: `id:` = cursor, `event: settlement`, `data:` = one Settlement as JSON",
        contentType: "text/event-stream",
        schema: z
          .string()
          .describe(
            "Server-Sent Events: `id: <cursor>\\nevent: settlement\\ndata: <Settlement JSON>\\n\\n`, " +
              "and `: heartbeat` comments",
          ),
      },
    },
  },
];
