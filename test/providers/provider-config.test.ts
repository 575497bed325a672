import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load-config.js";

const parse = (providers: Record<string, unknown>, env: Record<string, string> = {}) =>
  parseConfig({ providers }, env).providers;

describe("provider configuration", () => {
  it("defaults each base URL to the provider's public API, and resolves env: keys", () => {
    const providers = parse(
      {
        o: { type: "openai", apiKey: "env:OPENAI_API_KEY" },
        g: { type: "gemini", apiKey: "k" },
        a: { type: "anthropic", apiKey: "k" },
        r: { type: "replicate" },
      },
      { OPENAI_API_KEY: "sk-from-env" },
    );
    expect(providers.o).toMatchObject({
      baseUrl: "https://api.openai.com/v1",
      apiKey: "sk-from-env",
      timeoutSeconds: 10,
    });
    expect(providers.g).toMatchObject({
      baseUrl: "https://generativelanguage.googleapis.com",
      apiVersion: "v1beta",
    });
    expect(providers.a).toMatchObject({
      baseUrl: "https://api.anthropic.com",
      anthropicVersion: "2023-06-01",
    });
    expect(providers.r).toMatchObject({ baseUrl: "https://api.replicate.com/v1" });
    expect(providers.r).not.toHaveProperty("apiKey");
  });

  it("drops a trailing slash from baseUrl", () => {
    expect(parse({ o: { type: "openai", apiKey: "k", baseUrl: "http://127.0.0.1:9/v1/" } }).o).toMatchObject({
      baseUrl: "http://127.0.0.1:9/v1",
    });
  });

  it.each([
    [
      "an unknown type",
      { type: "azure" },
      "providers.x.type: must be one of: gemini, openai, anthropic, replicate, generic, bedrock, vertex, fal",
    ],
    ["a polled provider without a key", { type: "openai" }, "providers.x.apiKey"],
    [
      "a missing env: key",
      { type: "openai", apiKey: "env:NOT_SET_ANYWHERE" },
      "environment variable NOT_SET_ANYWHERE is not set",
    ],
    ["a bad base URL", { type: "anthropic", apiKey: "k", baseUrl: "ftp://x" }, "providers.x.baseUrl"],
    [
      "Gemini webhooks with neither secrets nor a JWKS",
      { type: "gemini", apiKey: "k", webhook: {} },
      "providers.x.webhook",
    ],
    [
      "a JWT set-up without an audience",
      { type: "gemini", apiKey: "k", webhook: { jwt: {} } },
      "providers.x.webhook.jwt.audience",
    ],
    [
      "hmac-sha256 without its header",
      { type: "generic", webhook: { scheme: "hmac-sha256", secrets: ["s"] } },
      "providers.x.webhook.header",
    ],
    [
      "a broken whsec_ secret",
      { type: "openai", apiKey: "k", webhook: { secrets: ["whsec_***"] } },
      "providers.x.webhook.secrets.0",
    ],
    [
      "an unknown webhook field",
      { type: "openai", apiKey: "k", webhook: { secrets: ["s"], scheme: "stripe" } },
      "providers.x.webhook.scheme",
    ],
    // Read by the generic provider alone: elsewhere an option that would do nothing is refused.
    ...(["openai", "gemini", "anthropic", "replicate"] as const).flatMap((type) =>
      (
        [
          ["url", "http://127.0.0.1:9/jobs?after={cursor}"],
          ["headers", { authorization: "Bearer t" }],
          ["timeoutSeconds", 5],
        ] as const
      ).map(([key, value]): [string, Record<string, unknown>, string] => [
        `discover.${key} on ${type}`,
        { type, apiKey: "k", discover: { enabled: true, [key]: value } },
        `providers.x.discover.${key}`,
      ]),
    ),
  ])("refuses %s, naming the field", (_name, provider, message) => {
    expect(() => parse({ x: provider })).toThrow(message);
  });

  it("fal: the documented defaults; an endpoint id is checked; no fetchTimeoutSeconds", () => {
    const { f } = parse({ f: { type: "fal", apiKey: "k", webhook: {} } });
    expect(f).toMatchObject({
      baseUrl: "https://queue.fal.run",
      platformBaseUrl: "https://api.fal.ai/v1",
      timeoutSeconds: 10,
      webhook: {
        jwksUrl: "https://rest.alpha.fal.ai/.well-known/jwks.json",
        toleranceSeconds: 300,
        jwksCacheSeconds: 86_400,
      },
    });
    expect(() => parse({ f: { type: "fal", app: "flux" } })).toThrow("providers.f.app");
    expect(() => parse({ f: { type: "fal", fetchTimeoutSeconds: 5 } })).toThrow("providers.f");
    expect(() => parse({ f: { type: "fal", webhook: { secrets: ["s"] } } })).toThrow("providers.f.webhook");
  });

  it("takes raw secrets for the HMAC and Stripe schemes, and whpk_ keys for v1a", () => {
    const providers = parse({
      s: { type: "generic", webhook: { scheme: "stripe", secrets: ["whsec_test_not_base64!"] } },
      v: {
        type: "generic",
        webhook: { secrets: [`whpk_${Buffer.alloc(32, 7).toString("base64")}`, "raw text secret"] },
      },
    });
    expect(providers.s).toMatchObject({ webhook: { scheme: "stripe", toleranceSeconds: 300 } });
    expect(providers.v).toMatchObject({ webhook: { scheme: "standard-webhooks" } });
  });

  it("takes discover.url, headers and timeoutSeconds on a generic instance", () => {
    const discover = {
      url: "http://127.0.0.1:9/jobs?after={cursor}",
      headers: { a: "b" },
      timeoutSeconds: 5,
    };
    expect(parse({ g: { type: "generic", discover: { enabled: true, ...discover } } }).g).toMatchObject({
      discover: { enabled: true, ...discover },
    });
  });

  // Issue 33: a sweep lists only what was created in the last lookbackHours; sweeps further apart
  // than that leave a gap in which a job whose webhooks were all lost is never listed.
  it("refuses discover.lookbackHours shorter than discover.intervalSeconds, naming both keys", () => {
    const openai = (discover: Record<string, unknown>) => ({
      o: { type: "openai", apiKey: "k", discover: { enabled: true, ...discover } },
    });
    const refusal = (discover: Record<string, unknown>) => {
      try {
        parse(openai(discover));
      } catch (error) {
        return (error as Error).message;
      }
      return "accepted";
    };
    // 299 s of lookback against the default 300 s between sweeps; 1 h against 2 h.
    for (const discover of [{ lookbackHours: 299 / 3_600 }, { intervalSeconds: 7_200, lookbackHours: 1 }]) {
      const message = refusal(discover);
      expect(message).toContain("providers.o.discover.lookbackHours");
      expect(message).toContain("providers.o.discover.intervalSeconds");
    }
    // Exactly the interval is enough; a disabled sweep lists nothing and is not checked.
    expect(parse(openai({ lookbackHours: 300 / 3_600 })).o!.discover).toMatchObject({ intervalSeconds: 300 });
    expect(refusal({ enabled: false, lookbackHours: 0.01 })).toBe("accepted");
  });
});
