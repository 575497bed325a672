import { createHmac } from "node:crypto";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { createDashboardAuth, SESSION_COOKIE } from "../../src/dashboard/dashboard-auth.js";

// The dashboard's session cookie is now an HMAC by WebCrypto: the same value node:crypto gave, so
// browsers signed in before the change stay signed in.

const TOKEN = "a-token-of-sixteen-or-more-characters";

function appWith(token: string | undefined) {
  const auth = createDashboardAuth(token);
  const app = new Hono();
  app.post("/login", async (c) => {
    await auth.startSession(c);
    return c.text("ok");
  });
  app.get("/page", async (c) => c.text(String(await auth.signedIn(c))));
  return app;
}

describe("dashboard session cookie with WebCrypto", () => {
  it("is the base64url HMAC-SHA256 of the fixed label under the API token, as before", async () => {
    const response = await appWith(TOKEN).request("/login", { method: "POST" });
    const expected = createHmac("sha256", TOKEN).update("finality dashboard session v1").digest("base64url");
    expect(response.headers.get("set-cookie")).toContain(`${SESSION_COOKIE}=${expected};`);
  });

  it("signs in with that cookie or the bearer token, and not with another cookie", async () => {
    const app = appWith(TOKEN);
    const cookie = createHmac("sha256", TOKEN).update("finality dashboard session v1").digest("base64url");
    const signedIn = async (headers: Record<string, string>) =>
      (await app.request("/page", { headers })).text();
    expect(await signedIn({ cookie: `${SESSION_COOKIE}=${cookie}` })).toBe("true");
    expect(await signedIn({ authorization: `Bearer ${TOKEN}` })).toBe("true");
    expect(await signedIn({ cookie: `${SESSION_COOKIE}=${cookie.slice(1)}` })).toBe("false");
    expect(await signedIn({})).toBe("false");
  });

  it("needs no sign-in without a token", async () => {
    expect(await (await appWith(undefined).request("/page")).text()).toBe("true");
  });
});
