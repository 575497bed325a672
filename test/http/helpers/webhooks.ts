import { Webhook } from "standardwebhooks";

/** A secret in the Standard Webhooks format: whsec_ and 24 random bytes in base64. */
export const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
export const OTHER_SECRET = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";

let counter = 0;

export interface WebhookBody {
  jobId: string;
  state: string;
  seq?: number;
  updateTime?: string;
  result?: unknown;
  error?: unknown;
}

/**
 * Headers signed by the official `standardwebhooks` package (a client nobody here wrote), so the
 * tests check the service against the scheme, not against itself.
 */
export function signWith(
  secret: string,
  body: string,
  options: { id?: string; timestampSeconds?: number } = {},
): Record<string, string> {
  const id = options.id ?? `msg_${process.pid}_${++counter}`;
  const timestampSeconds = options.timestampSeconds ?? Math.floor(Date.now() / 1000);
  const signature = new Webhook(secret).sign(id, new Date(timestampSeconds * 1000), body);
  return {
    "content-type": "application/json",
    "webhook-id": id,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": signature,
  };
}

export interface Sent {
  status: number;
  body: Record<string, unknown>;
}

/** POSTs a webhook signed with SECRET (or as told) and returns status and parsed answer. */
export async function sendWebhook(
  url: string,
  provider: string,
  payload: WebhookBody | string,
  options: { id?: string; timestampSeconds?: number; secret?: string; headers?: Record<string, string> } = {},
): Promise<Sent> {
  const body = typeof payload === "string" ? payload : JSON.stringify(payload);
  const headers = options.headers ?? signWith(options.secret ?? SECRET, body, options);
  const response = await fetch(`${url}/webhooks/${provider}`, { method: "POST", headers, body });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

export async function getJson(url: string, headers: Record<string, string> = {}): Promise<Sent> {
  const response = await fetch(url, { headers });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

export async function postJson(
  url: string,
  value: unknown,
  headers: Record<string, string> = {},
): Promise<Sent> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(value),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}
