import { type CryptoKey, exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";
import { FakeServer, header, type SeenRequest } from "./fake-server.js";
import { geminiEvent } from "./gemini-fixtures.js";
import { limitParam, pageOf } from "./list-pages.js";
import { type SignedDelivery, standardWebhook } from "./webhook-delivery.js";

/**
 * A fake Gemini API: `GET /v1beta/{name}` for operations and batches (names with `/`), `GET
 * /v1beta/interactions/{id}`, the key in `x-goog-api-key`, Google's `{error: {code, message,
 * status}}` errors, a JWKS at `/.well-known/jwks.json`, and webhooks both ways Gemini signs them:
 * Standard Webhooks for project webhooks, an RS256 JWT in `Webhook-Signature` for per-request ones.
 * `GET /v1beta/batches` lists batch operations (`pageSize`, `pageToken`; `{operations,
 * nextPageToken}`, both left out when empty, as proto3 JSON does). The API documents no order, so
 * the fake lists them by name, which is not creation order: a lister must not rely on one.
 */
export class GeminiFake {
  /** By resource name: `batches/x`, `models/m/operations/y`, `interactions/z`. */
  readonly objects = new Map<string, Record<string, unknown>>();
  readonly server: FakeServer;
  readonly audience = "finality-test-audience";
  readonly issuer = "https://generativelanguage.googleapis.com";
  private keys: { privateKey: CryptoKey; jwk: JWK } | null = null;

  constructor(readonly apiKey = "AIza-test-fake") {
    this.server = new FakeServer(
      (request) => this.route(request),
      (request) =>
        request.path === "/.well-known/jwks.json" || header(request, "x-goog-api-key") === this.apiKey
          ? null
          : {
              status: 403,
              body: googleError(403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers."),
            },
      () => googleError(404, "NOT_FOUND", "Requested entity was not found."),
    );
  }

  async listen(): Promise<string> {
    const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true });
    this.keys = {
      privateKey,
      jwk: { ...(await exportJWK(publicKey)), kid: "fake-key-1", alg: "RS256", use: "sig" },
    };
    return this.server.listen();
  }

  close(): Promise<void> {
    return this.server.close();
  }

  set(name: string, object: Record<string, unknown>): void {
    this.objects.set(name, object);
  }

  get jwks(): { keys: JWK[] } {
    if (!this.keys) throw new Error("listen() first");
    return { keys: [this.keys.jwk] };
  }

  /** A project webhook, signed with the static secret. */
  webhook(
    secret: string,
    type: string,
    data: Record<string, unknown>,
    options: { id?: string } = {},
  ): SignedDelivery {
    return standardWebhook(secret, geminiEvent(type, data), options);
  }

  /** A per-request webhook: an RS256 JWT in Webhook-Signature (claims as far as Google documents them). */
  async jwtWebhook(
    type: string,
    data: Record<string, unknown>,
    options: { audience?: string; expiresIn?: string; id?: string } = {},
  ): Promise<SignedDelivery> {
    if (!this.keys) throw new Error("listen() first");
    const token = await new SignJWT({ event_type: type })
      .setProtectedHeader({ alg: "RS256", kid: "fake-key-1", typ: "JWT" })
      .setIssuer(this.issuer)
      .setAudience(options.audience ?? this.audience)
      .setIssuedAt()
      .setExpirationTime(options.expiresIn ?? "5m")
      .sign(this.keys.privateKey);
    return {
      body: JSON.stringify(geminiEvent(type, data)),
      headers: {
        "content-type": "application/json",
        "webhook-signature": token,
        ...(options.id ? { "webhook-id": options.id } : {}),
      },
    };
  }

  /** The `GET /v1beta/batches` calls answered so far. */
  get listCalls(): number {
    return this.server.seen.filter((request) => request.path === "/v1beta/batches").length;
  }

  private listBatches(query: URLSearchParams) {
    const size = limitParam(query.get("pageSize"), 50, 0, 1000);
    if (size === undefined)
      return { status: 400, body: googleError(400, "INVALID_ARGUMENT", "Invalid page size.") };
    const batches = [...this.objects.entries()]
      .filter(([name]) => name.startsWith("batches/"))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, batch]) => batch);
    const token = query.get("pageToken");
    const afterId = token === null ? null : Buffer.from(token, "base64url").toString();
    const found = pageOf(batches, (batch) => String(batch.name), size === 0 ? 50 : size, { afterId });
    if (found === undefined)
      return { status: 400, body: googleError(400, "INVALID_ARGUMENT", "Invalid page token.") };
    const last = found.page.at(-1)?.name;
    return {
      status: 200,
      body: {
        ...(found.page.length > 0 ? { operations: found.page } : {}),
        ...(found.hasMore && last !== undefined
          ? { nextPageToken: Buffer.from(String(last)).toString("base64url") }
          : {}),
      },
    };
  }

  private route(request: SeenRequest) {
    if (request.method !== "GET") return null;
    if (request.path === "/.well-known/jwks.json") return { status: 200, body: this.jwks };
    if (request.path === "/v1beta/batches") return this.listBatches(request.query);
    const match = /^\/v1beta\/(.+)$/.exec(request.path);
    if (!match) return null;
    const name = (match[1] as string).split("/").map(decodeURIComponent).join("/");
    const object = this.objects.get(name);
    return object === undefined ? null : { status: 200, body: object };
  }
}

function googleError(code: number, status: string, message: string) {
  return { error: { code, message, status } };
}
