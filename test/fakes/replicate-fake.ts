import { FakeServer, header, type SeenRequest } from "./fake-server.js";
import { type SignedDelivery, standardWebhook } from "./webhook-delivery.js";

/**
 * A fake Replicate API: `GET /v1/predictions/{id}` and `GET /v1/webhooks/default/secret` with
 * `Authorization: Bearer <token>`, errors as `{detail, status, title}`, and webhooks whose body is
 * the whole prediction, signed with Standard Webhooks (`webhook-id` kept on a re-send).
 */
export class ReplicateFake {
  readonly predictions = new Map<string, Record<string, unknown>>();
  readonly server: FakeServer;

  constructor(
    readonly apiKey = "r8_test_fake",
    readonly secret = "whsec_5WbX5kEWLlfzsGNjH64I8lOOqUB6e8FH",
  ) {
    this.server = new FakeServer(
      (request) => this.route(request),
      (request) =>
        header(request, "authorization") === `Bearer ${this.apiKey}`
          ? null
          : {
              status: 401,
              body: {
                title: "Unauthenticated",
                detail: "You did not pass a valid authentication token",
                status: 401,
              },
            },
      () => ({ title: "Not found", detail: "The requested resource could not be found.", status: 404 }),
    );
  }

  listen(): Promise<string> {
    return this.server.listen();
  }

  close(): Promise<void> {
    return this.server.close();
  }

  set(object: Record<string, unknown>): void {
    this.predictions.set(String(object.id), object);
  }

  /** The prediction as a webhook; pass the same `id` to re-send one delivery. */
  webhook(
    object: Record<string, unknown>,
    options: { id?: string; timestampSeconds?: number } = {},
  ): SignedDelivery {
    return standardWebhook(this.secret, object, options);
  }

  private route(request: SeenRequest) {
    if (request.method !== "GET") return null;
    if (request.path === "/v1/webhooks/default/secret") return { status: 200, body: { key: this.secret } };
    const match = /^\/v1\/predictions\/([^/]+)$/.exec(request.path);
    const found = match ? this.predictions.get(decodeURIComponent(match[1] as string)) : undefined;
    return found === undefined ? null : { status: 200, body: found };
  }
}
