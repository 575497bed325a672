import { createHash, generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import { FakeServer, header, type SeenRequest } from "./fake-server.js";
import { limitParam, newestFirst, pageOf } from "./list-pages.js";
import type { SignedDelivery } from "./webhook-delivery.js";

/**
 * A fake fal, built from fal's documented formats:
 * - the queue (https://docs.fal.ai/documentation/model-apis/inference/queue):
 *   `GET /{owner}/{alias}/requests/{id}/status` → `{status, request_id, response_url, status_url,
 *   cancel_url, queue_position?, logs}` and, once COMPLETED, `GET /{owner}/{alias}/requests/{id}`
 *   → the model's output, or the request's error status with `{detail}`; auth `Authorization: Key <key>`,
 *   errors `{detail}`;
 * - webhooks (https://docs.fal.ai/model-apis/model-endpoints/webhooks): body `{request_id,
 *   gateway_request_id, status: OK|ERROR, payload, error?}`, signed with Ed25519 over
 *   `request_id\nuser_id\ntimestamp\nsha256hex(body)`, hex in X-Fal-Webhook-Signature, the public
 *   keys at `/.well-known/jwks.json` (no auth) as OKP/Ed25519 JWKs;
 * - the Platform API's request list (https://docs.fal.ai/platform-apis/v1/models/requests/by-endpoint):
 *   `GET /v1/models/requests/by-endpoint?endpoint_id=&limit=&cursor=&start=` →
 *   `{items, next_cursor, has_more}`, sorted by end time, `cursor` the base64 page number.
 * The queue and the Platform API share one server here; tests give both base URLs.
 */
export interface FalRequest {
  id: string;
  /** The endpoint it was submitted to, e.g. `fal-ai/flux/dev`. */
  endpoint: string;
  status: "IN_QUEUE" | "IN_PROGRESS" | "COMPLETED";
  /** The output (COMPLETED and succeeded). */
  payload?: unknown;
  /** The status's `error` and `error_type` (COMPLETED after a request error). */
  error?: { message: string; type: string };
  /** The result endpoint's answer for a request that failed in the model (422 validation). */
  resultStatus?: number;
  sentAt: string;
  endedAt?: string;
}

export class FalFake {
  readonly requests = new Map<string, FalRequest>();
  readonly server: FakeServer;
  private keys: { privateKey: KeyObject; publicKey: KeyObject }[] = [generateKeyPairSync("ed25519")];

  constructor(
    readonly apiKey = "fal_test_key:secret",
    readonly userId = "user_fake_123",
  ) {
    this.server = new FakeServer(
      (request) => this.route(request),
      (request) =>
        request.path.endsWith("/jwks.json") || header(request, "authorization") === `Key ${this.apiKey}`
          ? null
          : { status: 401, body: { detail: "Unauthorized" } },
      () => ({ detail: "Not Found" }),
    );
  }

  listen(): Promise<string> {
    return this.server.listen();
  }

  close(): Promise<void> {
    return this.server.close();
  }

  get jwksUrl(): string {
    return `${this.server.url}/.well-known/jwks.json`;
  }

  get jwksCalls(): number {
    return this.server.requestsTo("/.well-known/jwks.json").length;
  }

  set(request: FalRequest): void {
    this.requests.set(request.id, request);
  }

  /** A new signing key; `keepOld` publishes both for a while, as a rotation would. */
  rotate(options: { keepOld?: boolean } = {}): void {
    const fresh = generateKeyPairSync("ed25519");
    this.keys = options.keepOld ? [fresh, ...this.keys] : [fresh];
  }

  /** The webhook fal would send for this request, signed with the newest key. */
  webhook(
    body: Record<string, unknown>,
    options: { timestampSeconds?: number; userId?: string; requestId?: string; key?: KeyObject } = {},
  ): SignedDelivery {
    const text = JSON.stringify(body);
    const requestId = options.requestId ?? String(body.request_id);
    const userId = options.userId ?? this.userId;
    const timestamp = String(options.timestampSeconds ?? Math.floor(Date.now() / 1000));
    const digest = createHash("sha256").update(text).digest("hex");
    const message = Buffer.from(`${requestId}\n${userId}\n${timestamp}\n${digest}`);
    const signature = sign(
      null,
      message,
      options.key ?? (this.keys[0] as { privateKey: KeyObject }).privateKey,
    );
    return {
      body: text,
      headers: {
        "content-type": "application/json",
        "x-fal-webhook-request-id": requestId,
        "x-fal-webhook-user-id": userId,
        "x-fal-webhook-timestamp": timestamp,
        "x-fal-webhook-signature": signature.toString("hex"),
      },
    };
  }

  /** A key fal never published, for forged deliveries. */
  static strangerKey(): KeyObject {
    return generateKeyPairSync("ed25519").privateKey;
  }

  private jwks() {
    return {
      keys: this.keys.map(({ publicKey }, index) => ({
        ...publicKey.export({ format: "jwk" }),
        kid: `fal-key-${index}`,
        use: "sig",
        alg: "EdDSA",
      })),
    };
  }

  private route(request: SeenRequest) {
    if (request.method !== "GET") return null;
    if (request.path === "/.well-known/jwks.json") return { status: 200, body: this.jwks() };
    // For the test that a key set is taken from the configured URL only.
    if (request.path === "/moved/jwks.json")
      return { status: 302, body: {}, headers: { location: this.jwksUrl } };
    if (request.path === "/v1/models/requests/by-endpoint") return this.list(request.query);
    const match = /^\/([^/]+)\/([^/]+)\/requests\/([^/]+)(\/status)?$/.exec(request.path);
    if (match === null) return null;
    const [, owner, alias, id, status] = match as unknown as [string, string, string, string, string?];
    const found = this.requests.get(decodeURIComponent(id));
    // The queue path is the endpoint's owner/alias: a sub-path (`/dev`) is not part of it.
    if (found === undefined || !found.endpoint.startsWith(`${owner}/${alias}`)) return null;
    return status === undefined ? this.result(found) : { status: 200, body: this.status(found) };
  }

  private status(request: FalRequest) {
    const base = `${this.server.url}/${request.endpoint.split("/").slice(0, 2).join("/")}/requests/${request.id}`;
    return {
      status: request.status,
      request_id: request.id,
      response_url: base,
      status_url: `${base}/status`,
      cancel_url: `${base}/cancel`,
      logs: null,
      ...(request.status === "IN_QUEUE" ? { queue_position: 0 } : {}),
      ...(request.status === "COMPLETED" ? { metrics: { inference_time: 1.2 } } : {}),
      ...(request.error ? { error: request.error.message, error_type: request.error.type } : {}),
    };
  }

  private result(request: FalRequest) {
    if (request.status !== "COMPLETED")
      return { status: 400, body: { detail: "Request is still in progress" } };
    if (request.resultStatus !== undefined)
      return {
        status: request.resultStatus,
        body: { detail: [{ loc: ["body", "prompt"], msg: "field required", type: "value_error.missing" }] },
      };
    return { status: 200, body: request.payload ?? {} };
  }

  private list(query: URLSearchParams) {
    const endpoint = query.get("endpoint_id");
    const limit = limitParam(query.get("limit"), 50, 1, 100);
    if (endpoint === null || limit === undefined)
      return { status: 422, body: { detail: "endpoint_id is required and limit is 1 to 100" } };
    const start = Date.parse(query.get("start") ?? new Date(Date.now() - 86_400_000).toISOString());
    const all = newestFirst(
      [...this.requests.values()].filter(
        (request) => request.endpoint === endpoint && Date.parse(request.sentAt) >= start,
      ),
      (request) => Date.parse(request.endedAt ?? request.sentAt),
    );
    const pageNumber = Number(Buffer.from(query.get("cursor") ?? "MQ==", "base64").toString());
    const found = pageOf(all.slice((pageNumber - 1) * limit), (request) => request.id, limit);
    // A page past the end is refused, as an expired cursor would be.
    const past = pageNumber > 1 && found?.page.length === 0;
    if (found === undefined || past || !Number.isInteger(pageNumber) || pageNumber < 1)
      return { status: 400, body: { detail: "Invalid cursor" } };
    return {
      status: 200,
      body: {
        items: found.page.map((request) => ({
          request_id: request.id,
          endpoint_id: request.endpoint,
          sent_at: request.sentAt,
          started_at: request.sentAt,
          ended_at: request.endedAt ?? null,
          status_code: request.status === "COMPLETED" ? (request.resultStatus ?? 200) : null,
          duration: 1.2,
        })),
        next_cursor: found.hasMore ? Buffer.from(String(pageNumber + 1)).toString("base64") : null,
        has_more: found.hasMore,
      },
    };
  }
}
