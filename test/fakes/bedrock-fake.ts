import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { type FakeAnswer, FakeServer, header, type SeenRequest } from "./fake-server.js";
import { limitParam, newestFirst, pageOf } from "./list-pages.js";

/**
 * A fake Amazon Bedrock control plane for batch inference:
 * `GET /model-invocation-job/{jobIdentifier}` (the ARN, URL-encoded) and
 * `GET /model-invocation-jobs` (`maxResults` 1–1000, `nextToken`, `sortOrder`, `submitTimeAfter`,
 * `statusEquals`; `{invocationJobSummaries, nextToken}`). Errors as AWS restJson1 sends them:
 * `{message}` with the type in `x-amzn-ErrorType`.
 *
 * Every request must carry a Signature Version 4 for service `bedrock` in the configured region,
 * checked here with node:crypto (written apart from the adapter's WebCrypto signer): an unknown
 * access key is UnrecognizedClientException, a wrong signature InvalidSignatureException, a
 * stale `x-amz-date` "Signature expired", all 403.
 */
export class BedrockFake {
  readonly jobs = new Map<string, Record<string, unknown>>();
  readonly server: FakeServer;
  /** The session token the credentials must carry, when set. */
  sessionToken: string | undefined;

  constructor(
    readonly region = "us-east-1",
    readonly accessKeyId = "AKIAFAKEBEDROCK00001",
    readonly secretAccessKey = "fake/Secret+Key/For/Bedrock/Tests/0123456",
    readonly now: () => number = Date.now,
  ) {
    this.server = new FakeServer(
      (request) => this.route(request),
      (request) => this.checkSignature(request),
      () => ({ message: "Could not find the model invocation job." }),
    );
  }

  listen(): Promise<string> {
    return this.server.listen();
  }

  close(): Promise<void> {
    return this.server.close();
  }

  set(job: Record<string, unknown>): void {
    this.jobs.set(String(job.jobArn), job);
  }

  get listCalls(): number {
    return this.server.seen.filter((request) => request.path === "/model-invocation-jobs").length;
  }

  private route(request: SeenRequest): FakeAnswer | null {
    if (request.method !== "GET") return null;
    if (request.path === "/model-invocation-jobs") return this.list(request.query);
    const match = /^\/model-invocation-job\/([^/]+)$/.exec(request.path);
    if (match === null) return null;
    const found = this.jobs.get(decodeURIComponent(match[1] as string));
    return found === undefined ? notFound() : { status: 200, body: found };
  }

  private list(query: URLSearchParams): FakeAnswer {
    const max = limitParam(query.get("maxResults"), 1000, 1, 1000);
    if (max === undefined) return validation("maxResults must be between 1 and 1000");
    const after = query.get("submitTimeAfter");
    const status = query.get("statusEquals");
    let all = newestFirst(this.jobs.values(), (job) => Date.parse(String(job.submitTime)));
    if (query.get("sortOrder") === "Ascending") all = all.reverse();
    all = all.filter(
      (job) =>
        (after === null || Date.parse(String(job.submitTime)) > Date.parse(after)) &&
        (status === null || job.status === status),
    );
    const token = query.get("nextToken");
    const afterId = token === null ? null : Buffer.from(token, "base64url").toString();
    const found = pageOf(all, (job) => String(job.jobArn), max, { afterId });
    if (found === undefined) return validation("The provided pagination token is invalid.");
    const last = found.page.at(-1)?.jobArn;
    return {
      status: 200,
      body: {
        invocationJobSummaries: found.page,
        ...(found.hasMore && last !== undefined
          ? { nextToken: Buffer.from(String(last)).toString("base64url") }
          : {}),
      },
    };
  }

  private checkSignature(request: SeenRequest): FakeAnswer | null {
    const authorization = header(request, "authorization") ?? "";
    const parsed =
      /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/.exec(
        authorization,
      );
    if (parsed === null)
      return refused("MissingAuthenticationTokenException", "Missing Authentication Token");
    const [, keyId, day, region, service, signedHeaders, signature] = parsed as unknown as string[];
    if (keyId !== this.accessKeyId)
      return refused("UnrecognizedClientException", "The security token included in the request is invalid.");
    const amzDate = header(request, "x-amz-date") ?? "";
    const at = Date.parse(
      amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, "$1-$2-$3T$4:$5:$6Z"),
    );
    if (!Number.isFinite(at) || Math.abs(this.now() - at) > 5 * 60_000)
      return refused("InvalidSignatureException", "Signature expired");
    if (this.sessionToken !== undefined && header(request, "x-amz-security-token") !== this.sessionToken)
      return refused("UnrecognizedClientException", "The security token included in the request is invalid.");
    const names = (signedHeaders as string).split(";");
    if (
      !names.includes("host") ||
      !names.includes("x-amz-date") ||
      region !== this.region ||
      service !== "bedrock"
    )
      return refused(
        "InvalidSignatureException",
        "Credential should be scoped to a valid region and service.",
      );
    const expected = this.signature(request, names, day as string, amzDate);
    const valid = timingSafeEqual(Buffer.from(expected), Buffer.from(signature as string));
    return valid
      ? null
      : refused(
          "InvalidSignatureException",
          "The request signature we calculated does not match the signature you provided.",
        );
  }

  private signature(request: SeenRequest, names: string[], day: string, amzDate: string): string {
    const encode = (text: string) =>
      encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
    const query = [...request.query]
      .map(([k, v]) => `${encode(k)}=${encode(v)}`)
      .sort()
      .join("&");
    const canonical = [
      request.method,
      request.path.split("/").map(encode).join("/"),
      query,
      names.map((name) => `${name}:${(header(request, name) ?? "").trim()}\n`).join(""),
      names.join(";"),
      createHash("sha256").update("").digest("hex"),
    ].join("\n");
    const scope = `${day}/${this.region}/bedrock/aws4_request`;
    const toSign = [
      "AWS4-HMAC-SHA256",
      amzDate,
      scope,
      createHash("sha256").update(canonical).digest("hex"),
    ].join("\n");
    let key: Buffer = createHmac("sha256", `AWS4${this.secretAccessKey}`).update(day).digest();
    for (const part of [this.region, "bedrock", "aws4_request"])
      key = createHmac("sha256", key).update(part).digest();
    return createHmac("sha256", key).update(toSign).digest("hex");
  }
}

function refused(type: string, message: string): FakeAnswer {
  return { status: 403, body: { message }, headers: { "x-amzn-errortype": type } };
}

function notFound(): FakeAnswer {
  return {
    status: 404,
    body: { message: "Could not find the model invocation job." },
    headers: { "x-amzn-errortype": "ResourceNotFoundException" },
  };
}

function validation(message: string): FakeAnswer {
  return { status: 400, body: { message }, headers: { "x-amzn-errortype": "ValidationException" } };
}
