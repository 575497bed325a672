import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

export interface ReceivedDelivery {
  key: string;
  /** The request's path and query. */
  path: string;
  attempt: number;
  body: {
    type: string;
    idempotencyKey: string;
    attempt: number;
    job: { provider: string; id: string; state: string };
  };
}

/**
 * An effect receiver on loopback that dedupes by idempotency key, as README tells receivers to:
 * `applied` holds each key once, `deliveries` every request. `decide` may answer a status, or
 * `"hold"` to keep the request open (a receiver that is slow, or a sender that dies mid-request).
 */
export class EffectReceiver {
  readonly deliveries: ReceivedDelivery[] = [];
  readonly applied = new Map<string, ReceivedDelivery>();
  readonly held: ServerResponse[] = [];
  decide: (delivery: ReceivedDelivery) => number | "hold" = () => 204;
  /** Answers after this long: a slow receiver keeps deliveries in flight. */
  delayMs = 0;
  private server: Server | null = null;
  private waiters: { predicate: () => boolean; resolve: () => void }[] = [];

  constructor(private readonly secret?: string) {}

  async listen(): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    return this.url;
  }

  get url(): string {
    const address = this.server?.address() as AddressInfo | null | undefined;
    if (!address) throw new Error("the receiver is not listening");
    return `http://127.0.0.1:${address.port}/effects`;
  }

  /** Resolves once `predicate` holds, checked after every delivery: no timers. */
  until(predicate: () => boolean): Promise<void> {
    if (predicate()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ predicate, resolve }));
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString();
    if (this.secret) {
      try {
        new Webhook(this.secret).verify(raw, req.headers as Record<string, string>);
      } catch {
        res.writeHead(401).end();
        return;
      }
    }
    const body = JSON.parse(raw) as ReceivedDelivery["body"];
    const delivery = {
      key: String(req.headers["webhook-id"]),
      path: req.url ?? "",
      attempt: body.attempt,
      body,
    };
    this.deliveries.push(delivery);
    if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    const decision = this.decide(delivery);
    if (decision === "hold") {
      this.held.push(res);
    } else {
      if (decision >= 200 && decision < 300 && !this.applied.has(delivery.key))
        this.applied.set(delivery.key, delivery);
      res.writeHead(decision).end();
    }
    this.waiters = this.waiters.filter((w) => {
      if (!w.predicate()) return true;
      w.resolve();
      return false;
    });
  }
}
