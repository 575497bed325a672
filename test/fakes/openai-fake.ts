import { FakeServer, header, type SeenRequest } from "./fake-server.js";
import { limitParam, newestFirst, pageOf } from "./list-pages.js";
import { openaiEvent } from "./openai-fixtures.js";
import { type SignedDelivery, standardWebhook } from "./webhook-delivery.js";

/**
 * A fake OpenAI API: `GET /v1/responses/{id}` and `GET /v1/batches/{id}` with `Authorization:
 * Bearer <key>`, errors in OpenAI's `{error: {message, type, param, code}}` shape, and webhooks as
 * OpenAI sends them (Standard Webhooks, thin `{id, object: "event", created_at, type, data: {id}}`).
 * `GET /v1/batches` lists batches newest first: `limit` (1-100, default 20) and `after` (a batch
 * id), answering `{object: "list", data, first_id, last_id, has_more}`.
 */
export class OpenAIFake {
  readonly objects = new Map<string, Record<string, unknown>>();
  readonly server: FakeServer;

  constructor(readonly apiKey = "sk-test-fake") {
    this.server = new FakeServer(
      (request) => {
        if (request.method === "GET" && request.path === "/v1/batches") return this.listBatches(request);
        const match = /^\/v1\/(responses|batches)\/([^/]+)$/.exec(request.path);
        if (request.method !== "GET" || !match) return null;
        const object = this.objects.get(decodeURIComponent(match[2] as string));
        const expected = match[1] === "responses" ? "response" : "batch";
        return object && object.object === expected ? { status: 200, body: object } : null;
      },
      (request) =>
        header(request, "authorization") === `Bearer ${this.apiKey}`
          ? null
          : { status: 401, body: openaiError("Incorrect API key provided.", "invalid_api_key") },
      () => openaiError("No such object.", null),
    );
  }

  listen(): Promise<string> {
    return this.server.listen();
  }

  close(): Promise<void> {
    return this.server.close();
  }

  set(object: Record<string, unknown>): void {
    this.objects.set(String(object.id), object);
  }

  /** The `GET /v1/batches` calls answered so far (429s and refusals included). */
  get listCalls(): number {
    return this.server.seen.filter((request) => request.path === "/v1/batches").length;
  }

  private listBatches(request: SeenRequest) {
    const limit = limitParam(request.query.get("limit"), 20, 1, 100);
    if (limit === undefined)
      return { status: 400, body: openaiError("limit must be between 1 and 100.", "invalid_value") };
    const batches = newestFirst(
      [...this.objects.values()].filter((object) => object.object === "batch"),
      (batch) => Number(batch.created_at),
    );
    const found = pageOf(batches, (batch) => String(batch.id), limit, {
      afterId: request.query.get("after"),
    });
    if (found === undefined) return { status: 400, body: openaiError("No such batch for after.", null) };
    return {
      status: 200,
      body: {
        object: "list",
        data: found.page,
        first_id: found.page[0]?.id ?? null,
        last_id: found.page.at(-1)?.id ?? null,
        has_more: found.hasMore,
      },
    };
  }

  /** A signed thin webhook for `objectId`. */
  webhook(secret: string, type: string, objectId: string, options: { id?: string } = {}): SignedDelivery {
    return standardWebhook(secret, openaiEvent(type, objectId, Math.floor(Date.now() / 1000)), options);
  }
}

function openaiError(message: string, code: string | null) {
  return { error: { message, type: "invalid_request_error", param: null, code } };
}
