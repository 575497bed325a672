import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { bearerTokenOf } from "../http/bearer-auth.js";
import { constantTimeEqual } from "../http/constant-time-equal.js";

export const SESSION_COOKIE = "finality_session";
const SESSION_HOURS = 12;

/**
 * The dashboard's sign-in, with the same secret as the API: when `server.apiToken` is set, a
 * page needs either `Authorization: Bearer <token>` or the session cookie that the login form
 * sets after checking the token. The cookie holds an HMAC of the token, not the token: it is
 * worthless elsewhere, and changing the token signs every browser out. HttpOnly (no script
 * reads it) and SameSite=Strict (no other site's form or link carries it to a POST).
 */
export interface DashboardAuth {
  /** False when the service has no API token (it then listens on loopback only). */
  readonly required: boolean;
  signedIn(c: Context): Promise<boolean>;
  /** True when `given` is the API token (constant time). */
  accepts(given: string): boolean;
  startSession(c: Context): Promise<void>;
  endSession(c: Context): void;
}

export function createDashboardAuth(apiToken: string | undefined): DashboardAuth {
  if (apiToken === undefined) {
    return {
      required: false,
      signedIn: async () => true,
      accepts: () => true,
      async startSession() {},
      endSession() {},
    };
  }
  // WebCrypto (so the dashboard runs on Workers) answers with a promise: computed once, on first use.
  let session: Promise<string> | undefined;
  const sessionValue = () => {
    session ??= hmacBase64Url(apiToken, "finality dashboard session v1");
    return session;
  };
  const secure = (c: Context) =>
    new URL(c.req.url).protocol === "https:" || c.req.header("x-forwarded-proto") === "https";
  return {
    required: true,
    async signedIn(c) {
      const given = bearerTokenOf(c.req.header("authorization"));
      if (given !== "") return constantTimeEqual(given, apiToken);
      return constantTimeEqual(getCookie(c, SESSION_COOKIE) ?? "", await sessionValue());
    },
    accepts: (given) => constantTimeEqual(given, apiToken),
    async startSession(c) {
      setCookie(c, SESSION_COOKIE, await sessionValue(), {
        httpOnly: true,
        sameSite: "Strict",
        path: "/",
        secure: secure(c),
        maxAge: SESSION_HOURS * 3600,
      });
    },
    endSession(c) {
      deleteCookie(c, SESSION_COOKIE, { path: "/", secure: secure(c) });
    },
  };
}

/** HMAC-SHA256 of `message` keyed by `key`, in unpadded base64url (as node:crypto's "base64url"). */
async function hmacBase64Url(key: string, message: string): Promise<string> {
  const encoder = new TextEncoder();
  // WebCrypto refuses an empty key; HMAC pads a short key with zeros, so one zero byte is the same key.
  const keyBytes = key === "" ? new Uint8Array(1) : encoder.encode(key);
  const hmac = { name: "HMAC", hash: "SHA-256" };
  const cryptoKey = await crypto.subtle.importKey("raw", keyBytes, hmac, false, ["sign"]);
  const digest = new Uint8Array(await crypto.subtle.sign(hmac, cryptoKey, encoder.encode(message)));
  let binary = "";
  for (const byte of digest) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** A local path to go back to after a form: never another site ("//evil", "/\\evil", "https:"). */
export function localPath(value: string | null | undefined, fallback = "/"): string {
  // Browsers drop tabs and newlines from URLs ("/\t/evil" becomes "//evil") and read "\\" as "/".
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing them is the point.
  if (!value?.startsWith("/") || /[\u0000-\u0020\u007f\\]/.test(value) || value.startsWith("//"))
    return fallback;
  if (value.startsWith("/login") || value.length > 2000) return fallback;
  return value;
}
