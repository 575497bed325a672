import { Webhook } from "standardwebhooks";

/** A webhook as a provider would send it: the exact body bytes and the headers that sign them. */
export interface SignedDelivery {
  body: string;
  headers: Record<string, string>;
}

let counter = 0;

/**
 * Signs with the official `standardwebhooks` package (a client nobody here wrote): the fakes
 * sign the way the providers' own senders do, so the adapters are checked against the scheme.
 */
export function standardWebhook(
  secret: string,
  payload: unknown,
  options: { id?: string; timestampSeconds?: number } = {},
): SignedDelivery {
  const body = typeof payload === "string" ? payload : JSON.stringify(payload);
  const id = options.id ?? `msg_fake_${process.pid}_${++counter}`;
  const timestampSeconds = options.timestampSeconds ?? Math.floor(Date.now() / 1000);
  const signature = new Webhook(secret).sign(id, new Date(timestampSeconds * 1000), body);
  return {
    body,
    headers: {
      "content-type": "application/json",
      "webhook-id": id,
      "webhook-timestamp": String(timestampSeconds),
      "webhook-signature": signature,
    },
  };
}

/** POSTs a delivery to a Finality URL (only ever a loopback one in these tests). */
export async function deliver(
  url: string,
  delivery: SignedDelivery,
): Promise<{ status: number; body: Record<string, unknown> }> {
  if (!url.startsWith("http://127.0.0.1:")) throw new Error(`refusing to send a webhook to ${url}`);
  const response = await fetch(url, { method: "POST", headers: delivery.headers, body: delivery.body });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}
