import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type CryptoKey, exportPKCS8, generateKeyPair, jwtVerify } from "jose";
import { type FakeAnswer, FakeServer, header, type SeenRequest } from "./fake-server.js";
import { limitParam, pageOf } from "./list-pages.js";

const SCOPE = "https://www.googleapis.com/auth/cloud-platform";

/**
 * A fake Vertex AI (`GET /v1/projects/{p}/locations/{l}/batchPredictionJobs[/{id}]`, `pageSize`
 * up to 100, `pageToken`; `{batchPredictionJobs, nextPageToken}`, both left out when empty) and
 * a fake Google token endpoint (`POST /token`) on its own port.
 *
 * The token endpoint does what Google's does for a service account's JWT bearer grant: checks
 * the assertion's RS256 signature against the account's public key, its `iss`, `aud` (the
 * endpoint's URL), `scope` and lifetime (at most an hour), and answers `{access_token, expires_in,
 * token_type}`, or 400 `invalid_grant`. The API takes only a token it issued and that has not
 * expired (401 UNAUTHENTICATED otherwise). The list answers in name order, which is not creation order.
 */
export class VertexFake {
  readonly jobs = new Map<string, Record<string, unknown>>();
  readonly server: FakeServer;
  readonly clientEmail = "finality-poller@fake-project.iam.gserviceaccount.com";
  /** Seconds each issued token lives. */
  tokenLifetimeSeconds = 3600;
  /** Assertions the token endpoint was sent (decoded claims), in order. */
  readonly grants: Record<string, unknown>[] = [];
  /** When set, the token endpoint answers this status instead (e.g. 503). */
  tokenFailure: number | null = null;
  private readonly tokens = new Map<string, number>();
  private tokenServer: Server | null = null;
  private publicKey: CryptoKey | null = null;
  private pem = "";

  constructor(readonly now: () => number = Date.now) {
    this.server = new FakeServer(
      (request) => this.route(request),
      (request) => this.checkToken(request),
      () => googleError(404, "NOT_FOUND", "The BatchPredictionJob does not exist."),
    );
  }

  async listen(): Promise<string> {
    const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true });
    this.publicKey = publicKey;
    this.pem = await exportPKCS8(privateKey);
    this.tokenServer = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        void this.grant(req.method ?? "GET", Buffer.concat(chunks).toString()).then((answer) => {
          res.writeHead(answer.status, { "content-type": "application/json" });
          res.end(JSON.stringify(answer.body));
        });
      });
    });
    await new Promise<void>((resolve) => this.tokenServer?.listen(0, "127.0.0.1", resolve));
    return this.server.listen();
  }

  async close(): Promise<void> {
    const token = this.tokenServer;
    if (token !== null) {
      const closed = new Promise<void>((resolve) => token.close(() => resolve()));
      token.closeAllConnections();
      await closed;
    }
    await this.server.close();
  }

  get tokenUrl(): string {
    const address = this.tokenServer?.address() as AddressInfo | null;
    if (!address) throw new Error("the fake is not listening");
    return `http://127.0.0.1:${address.port}/token`;
  }

  /** The service account key file, as the console gives it (its token_uri pointing here). */
  keyFile(overrides: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      type: "service_account",
      project_id: "fake-project",
      private_key_id: "0123456789abcdef",
      private_key: this.pem,
      client_email: this.clientEmail,
      client_id: "100000000000000000001",
      token_uri: this.tokenUrl,
      ...overrides,
    };
  }

  /** Every issued token stops working (as after the key was deleted and the tokens revoked). */
  revokeTokens(): void {
    this.tokens.clear();
  }

  set(job: Record<string, unknown>): void {
    this.jobs.set(String(job.name), job);
  }

  get listCalls(): number {
    return this.server.seen.filter((request) => request.path.endsWith("/batchPredictionJobs")).length;
  }

  private async grant(method: string, text: string): Promise<FakeAnswer> {
    if (this.tokenFailure !== null) return { status: this.tokenFailure, body: { error: "internal_failure" } };
    const form = new URLSearchParams(text);
    if (method !== "POST" || form.get("grant_type") !== "urn:ietf:params:oauth:grant-type:jwt-bearer")
      return invalidGrant("unsupported_grant_type", "Invalid grant_type.");
    try {
      const { payload } = await jwtVerify(form.get("assertion") ?? "", this.publicKey as CryptoKey, {
        algorithms: ["RS256"],
        issuer: this.clientEmail,
        audience: this.tokenUrl,
        currentDate: new Date(this.now()),
        maxTokenAge: "1h",
      });
      this.grants.push(payload);
      if (payload.scope !== SCOPE) return invalidGrant("invalid_scope", "Invalid OAuth scope.");
      if (
        typeof payload.exp !== "number" ||
        typeof payload.iat !== "number" ||
        payload.exp - payload.iat > 3600
      )
        return invalidGrant("invalid_grant", "Invalid JWT: Token must be a short-lived token.");
    } catch {
      return invalidGrant("invalid_grant", "Invalid JWT Signature.");
    }
    const token = `ya29.fake-${randomUUID()}`;
    this.tokens.set(token, this.now() + this.tokenLifetimeSeconds * 1000);
    return {
      status: 200,
      body: { access_token: token, expires_in: this.tokenLifetimeSeconds, token_type: "Bearer" },
    };
  }

  private checkToken(request: SeenRequest): FakeAnswer | null {
    const token = /^Bearer (.+)$/.exec(header(request, "authorization") ?? "")?.[1];
    const expiresAt = token === undefined ? undefined : this.tokens.get(token);
    if (expiresAt !== undefined && this.now() < expiresAt) return null;
    return {
      status: 401,
      body: googleError(
        401,
        "UNAUTHENTICATED",
        "Request had invalid authentication credentials. Expected OAuth 2 access token.",
      ),
    };
  }

  private route(request: SeenRequest): FakeAnswer | null {
    if (request.method !== "GET") return null;
    const list = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/batchPredictionJobs$/.exec(request.path);
    if (list !== null) return this.list(list[2] as string, request.query);
    const found = this.jobs.get(decodeURIComponent(request.path.replace(/^\/v1\//, "")));
    return found === undefined ? null : { status: 200, body: found };
  }

  private list(location: string, query: URLSearchParams): FakeAnswer {
    const size = limitParam(query.get("pageSize"), 0, 0, 1000);
    if (size === undefined)
      return { status: 400, body: googleError(400, "INVALID_ARGUMENT", "Invalid page size.") };
    const all = [...this.jobs.values()]
      .filter((job) => String(job.name).includes(`/locations/${location}/`))
      .sort((a, b) => String(a.name).localeCompare(String(b.name)));
    const token = query.get("pageToken");
    const afterId = token === null ? null : Buffer.from(token, "base64url").toString();
    const found = pageOf(all, (job) => String(job.name), Math.min(size === 0 ? 100 : size, 100), { afterId });
    if (found === undefined)
      return { status: 400, body: googleError(400, "INVALID_ARGUMENT", "Invalid page token.") };
    const last = found.page.at(-1)?.name;
    return {
      status: 200,
      body: {
        ...(found.page.length > 0 ? { batchPredictionJobs: found.page } : {}),
        ...(found.hasMore && last !== undefined
          ? { nextPageToken: Buffer.from(String(last)).toString("base64url") }
          : {}),
      },
    };
  }
}

function invalidGrant(error: string, description: string): FakeAnswer {
  return { status: 400, body: { error, error_description: description } };
}

function googleError(code: number, status: string, message: string) {
  return { error: { code, message, status } };
}
