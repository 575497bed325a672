import { FakeServer, header, type SeenRequest } from "./fake-server.js";
import { newestFirst, pageOf } from "./list-pages.js";
import { type SignedDelivery, standardWebhook } from "./webhook-delivery.js";

/**
 * A fake Replicate API: `GET /v1/predictions/{id}` and `GET /v1/webhooks/default/secret` with
 * `Authorization: Bearer <token>`, errors as `{detail, status, title}`, and webhooks whose body is
 * the whole prediction, signed with Standard Webhooks (`webhook-id` kept on a re-send).
 * `GET /v1/predictions` lists them most recent first, 100 a page, as `{next, previous, results}`
 * with `next` a full URL carrying an opaque `cursor` (`previous` always null here), each item in the documented list shape
 * (`schemas_prediction_response`: no `webhook`, no `webhook_events_filter`).
 */
const PAGE_SIZE = 100;
const LIST_FIELDS = [
  "completed_at",
  "created_at",
  "data_removed",
  "deadline",
  "deployment",
  "error",
  "id",
  "input",
  "logs",
  "metrics",
  "model",
  "output",
  "source",
  "started_at",
  "status",
  "urls",
  "version",
];

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

  /** The `GET /v1/predictions` calls answered so far. */
  get listCalls(): number {
    return this.server.seen.filter((request) => request.path === "/v1/predictions").length;
  }

  private list(query: URLSearchParams) {
    const all = newestFirst(this.predictions.values(), (prediction) =>
      Date.parse(String(prediction.created_at)),
    );
    const cursor = query.get("cursor");
    const afterId = cursor === null ? null : Buffer.from(cursor, "base64url").toString();
    const found = pageOf(all, (prediction) => String(prediction.id), PAGE_SIZE, { afterId });
    if (found === undefined)
      return { status: 400, body: { title: "Invalid cursor", detail: "Invalid cursor", status: 400 } };
    const last = found.page.at(-1)?.id;
    const link = (id: string) =>
      `${this.server.url}/v1/predictions?cursor=${Buffer.from(id).toString("base64url")}`;
    return {
      status: 200,
      body: {
        next: found.hasMore && last !== undefined ? link(String(last)) : null,
        // Paging backwards is not modelled: nothing Finality does reads it.
        previous: null,
        results: found.page.map((prediction) =>
          Object.fromEntries(Object.entries(prediction).filter(([field]) => LIST_FIELDS.includes(field))),
        ),
      },
    };
  }

  private route(request: SeenRequest) {
    if (request.method !== "GET") return null;
    if (request.path === "/v1/predictions") return this.list(request.query);
    if (request.path === "/v1/webhooks/default/secret") return { status: 200, body: { key: this.secret } };
    const match = /^\/v1\/predictions\/([^/]+)$/.exec(request.path);
    const found = match ? this.predictions.get(decodeURIComponent(match[1] as string)) : undefined;
    return found === undefined ? null : { status: 200, body: found };
  }
}
