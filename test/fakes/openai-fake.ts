import { FakeServer, header } from "./fake-server.js";
import { openaiEvent } from "./openai-fixtures.js";
import { type SignedDelivery, standardWebhook } from "./webhook-delivery.js";

/**
 * A fake OpenAI API: `GET /v1/responses/{id}` and `GET /v1/batches/{id}` with `Authorization:
 * Bearer <key>`, errors in OpenAI's `{error: {message, type, param, code}}` shape, and webhooks as
 * OpenAI sends them (Standard Webhooks, thin `{id, object: "event", created_at, type, data: {id}}`).
 */
export class OpenAIFake {
  readonly objects = new Map<string, Record<string, unknown>>();
  readonly server: FakeServer;

  constructor(readonly apiKey = "sk-test-fake") {
    this.server = new FakeServer(
      (request) => {
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

  /** A signed thin webhook for `objectId`. */
  webhook(secret: string, type: string, objectId: string, options: { id?: string } = {}): SignedDelivery {
    return standardWebhook(secret, openaiEvent(type, objectId, Math.floor(Date.now() / 1000)), options);
  }
}

function openaiError(message: string, code: string | null) {
  return { error: { message, type: "invalid_request_error", param: null, code } };
}
