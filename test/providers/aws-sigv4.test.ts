import { describe, expect, it } from "vitest";
import { signSigV4 } from "../../src/providers/bedrock/aws-sigv4.js";

// The signatures below are AWS's, from the Signature Version 4 test suite (get-vanilla,
// get-vanilla-query-order-key-case): example credentials, 2015-08-30T12:36:00Z, us-east-1, "service".
const credentials = {
  accessKeyId: "AKIDEXAMPLE",
  secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
};
const at = Date.UTC(2015, 7, 30, 12, 36, 0);
const sign = (url: string, more: Partial<Parameters<typeof signSigV4>[0]> = {}) =>
  signSigV4({
    method: "GET",
    url: new URL(url),
    headers: {},
    credentials,
    region: "us-east-1",
    service: "service",
    now: at,
    ...more,
  });

describe("AWS Signature Version 4 (WebCrypto)", () => {
  it("signs get-vanilla as the test suite does", async () => {
    expect(await sign("https://example.amazonaws.com/")).toEqual({
      "x-amz-date": "20150830T123600Z",
      authorization:
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
    });
  });

  it("sorts the query as get-vanilla-query-order-key-case does", async () => {
    const headers = await sign("https://example.amazonaws.com/?Param2=value2&Param1=value1");
    expect(headers.authorization).toMatch(
      /Signature=b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500$/,
    );
  });

  it("signs the session token of temporary credentials, and a changed path changes the signature", async () => {
    const withToken = await sign("https://example.amazonaws.com/", {
      credentials: { ...credentials, sessionToken: "token-1" },
    });
    expect(withToken["x-amz-security-token"]).toBe("token-1");
    expect(withToken.authorization).toContain("SignedHeaders=host;x-amz-date;x-amz-security-token,");
    const a = await sign("https://bedrock.us-east-1.amazonaws.com/model-invocation-job/arn%3Aaws%3Ax%2Fa");
    const b = await sign("https://bedrock.us-east-1.amazonaws.com/model-invocation-job/arn%3Aaws%3Ax%2Fb");
    expect(a.authorization).not.toBe(b.authorization);
  });
});
