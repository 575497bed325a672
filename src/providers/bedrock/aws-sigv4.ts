import { loadOnce } from "../../core/load-once.js";

/**
 * AWS Signature Version 4 for a bodiless request (a GET), with AWS's own signer
 * (`@smithy/signature-v4`, the one the AWS SDK for JavaScript uses) and a pure-JavaScript SHA-256
 * (`@aws-crypto/sha256-js`), so the same code signs on Node and on Workers. Spec:
 * https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html; checked against
 * AWS's published test suite (test/providers/aws-sigv4.test.ts) and against the Bedrock fake's own
 * node:crypto verifier.
 */

interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  /** Temporary credentials (STS): sent, and signed, as `x-amz-security-token`. */
  sessionToken?: string | undefined;
}

interface SigV4Request {
  method: string;
  url: URL;
  /** Headers to sign besides `host` and `x-amz-date` (lower-case names). */
  headers: Record<string, string>;
  credentials: AwsCredentials;
  region: string;
  service: string;
  /** Epoch milliseconds of the signature. */
  now: number;
}

const ADDED = ["authorization", "x-amz-date", "x-amz-security-token"] as const;

/**
 * The signer and its SHA-256 (with their dependencies, ~4 MiB of an idle `serve`: issue 29):
 * imported for the first signature, so that a service without a Bedrock provider never loads them.
 */
const loadSigner = loadOnce(async () => {
  const [{ SignatureV4 }, { Sha256 }] = await Promise.all([
    import("@smithy/signature-v4"),
    import("@aws-crypto/sha256-js"),
  ]);
  return { SignatureV4, Sha256 };
});

/** The headers to add to the request: `x-amz-date`, the session token if any, and `authorization`. */
export async function signSigV4(request: SigV4Request): Promise<Record<string, string>> {
  const { SignatureV4, Sha256 } = await loadSigner();
  const signer = new SignatureV4({
    credentials: request.credentials,
    region: request.region,
    service: request.service,
    sha256: Sha256,
    // Every service but S3 signs each path segment encoded once more than it is sent.
    uriEscapePath: true,
    // No x-amz-content-sha256 header: only S3 asks for one.
    applyChecksum: false,
  });
  const query: Record<string, string | string[]> = {};
  for (const [name, value] of request.url.searchParams) {
    const seen = query[name];
    query[name] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
  }
  const signed = await signer.sign(
    {
      method: request.method.toUpperCase(),
      protocol: request.url.protocol,
      hostname: request.url.hostname,
      ...(request.url.port === "" ? {} : { port: Number(request.url.port) }),
      path: request.url.pathname,
      query,
      headers: { ...request.headers, host: request.url.host },
    },
    { signingDate: new Date(request.now) },
  );
  const added: Record<string, string> = {};
  for (const name of ADDED) {
    const value = signed.headers[name];
    if (value !== undefined) added[name] = value;
  }
  return added;
}
