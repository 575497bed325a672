import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { signStandardWebhook } from "../webhooks/schemes/standard-webhooks/node.js";

/** One step of a job's true timeline at the fake provider. */
export interface TimelineStep {
  /** Milliseconds after the job was created at the provider. */
  afterMs: number;
  state: string;
  result?: unknown;
  error?: unknown;
}

interface FakeProviderOptions {
  /** Answer each poll after this many ms (a slow provider). */
  latencyMs?: number;
  now?: () => number;
}

interface FakeJob {
  createdAt: number;
  timeline: TimelineStep[];
  /** The tag the submitter asked the provider to carry (an intent key). */
  tag?: string | undefined;
}

/**
 * A fake `generic` provider for tests and the demo: it keeps jobs with a true state timeline,
 * answers `GET /jobs/:id` in the generic JSON shape and `GET /jobs?after=<cursor>` in the generic
 * list shape (pages of `listPageSize`), can be made slow, failing or rate-limited,
 * and sends Standard Webhooks-signed notifications that may be lost, duplicated or reordered.
 * It only ever listens on and sends to loopback addresses given to it.
 */
export class FakeProvider {
  readonly jobs = new Map<string, FakeJob>();
  /** Status polls answered, by job id. */
  readonly polls = new Map<string, number>();
  /** Polls being answered now, and the most there ever were at once. */
  inFlight = 0;
  peakInFlight = 0;
  /** When set, every poll is answered with this status (e.g. 503), and 429 carries Retry-After. */
  failWith: { status: number; retryAfterSeconds?: number } | null = null;
  /** List calls answered (`GET /jobs?after=`), and the page size of the list API. */
  listCalls = 0;
  listPageSize = 100;
  /** Statuses the next list calls answer with, one each, before pages again (429 carries Retry-After). */
  readonly listFailures: { status: number; retryAfterSeconds?: number }[] = [];
  /** List calls to fail, by their number (1 = the first list call this fake answers). */
  readonly failListCalls = new Map<number, { status: number; retryAfterSeconds?: number }>();
  /** The cursor of each list call, in order ("" for a first page). */
  readonly listCursors: string[] = [];
  latencyMs: number;
  /** Job ids in creation order: the list API's order (newest last). */
  private readonly order: string[] = [];
  private server: Server | null = null;
  private readonly now: () => number;

  constructor(options: FakeProviderOptions = {}) {
    this.latencyMs = options.latencyMs ?? 0;
    this.now = options.now ?? Date.now;
  }

  addJob(id: string, timeline: TimelineStep[], options: { tag?: string; createdAt?: number } = {}): void {
    if (!this.jobs.has(id)) this.order.push(id);
    this.jobs.set(id, {
      createdAt: options.createdAt ?? this.now(),
      timeline: [...timeline].sort((a, b) => a.afterMs - b.afterMs),
      tag: options.tag,
    });
  }

  /**
   * One page of the generic list API: the jobs after the first `after` (a count, as the cursor),
   * oldest first, `nextCursor` null on the last page.
   */
  listPage(after: string): { data: unknown[]; nextCursor: string | null } {
    const start = after === "" ? 0 : Number(after);
    const end = start + this.listPageSize;
    const data = this.order.slice(start, end).map((id) => {
      const job = this.jobs.get(id) as FakeJob;
      const state = this.stateOf(id);
      return {
        jobId: id,
        state: state?.state,
        seq: state?.seq,
        createdAt: new Date(job.createdAt).toISOString(),
        ...(job.tag === undefined ? {} : { tag: job.tag }),
      };
    });
    return { data, nextCursor: end < this.order.length ? String(end) : null };
  }

  /** The job's true state now, with its index in the timeline as `seq`. */
  stateOf(
    id: string,
  ): { jobId: string; state: string; seq: number; result?: unknown; error?: unknown } | null {
    const job = this.jobs.get(id);
    if (!job) return null;
    const elapsed = this.now() - job.createdAt;
    let index = 0;
    job.timeline.forEach((step, i) => {
      if (step.afterMs <= elapsed) index = i;
    });
    const step = job.timeline[index];
    if (!step) return null;
    return { jobId: id, state: step.state, seq: index + 1, result: step.result, error: step.error };
  }

  async listen(): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    return this.url;
  }

  get url(): string {
    const address = this.server?.address() as AddressInfo | null;
    if (!address) throw new Error("the fake provider is not listening");
    return `http://127.0.0.1:${address.port}`;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // Polls held open by `latencyMs` would otherwise keep close() waiting.
    server.closeAllConnections();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const list = /^\/jobs\?after=([0-9]*)$/.exec(req.url ?? "");
    if (req.method === "GET" && list) return this.answerList(list[1] ?? "", res);
    const match = /^\/jobs\/([^/?]+)$/.exec(req.url ?? "");
    if (req.method !== "GET" || !match?.[1]) return send(res, 404, { error: "not found" });
    const id = decodeURIComponent(match[1]);
    this.polls.set(id, (this.polls.get(id) ?? 0) + 1);
    this.inFlight++;
    this.peakInFlight = Math.max(this.peakInFlight, this.inFlight);
    try {
      await this.answer(id, res);
    } finally {
      this.inFlight--;
    }
  }

  private answerList(after: string, res: ServerResponse): void {
    this.listCalls++;
    this.listCursors.push(after);
    const failure = this.failListCalls.get(this.listCalls) ?? this.listFailures.shift();
    if (failure) {
      const headers: Record<string, string> =
        failure.retryAfterSeconds === undefined ? {} : { "retry-after": String(failure.retryAfterSeconds) };
      send(res, failure.status, { error: "failing on purpose" }, headers);
      return;
    }
    send(res, 200, this.listPage(after));
  }

  private async answer(id: string, res: ServerResponse): Promise<void> {
    if (this.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, this.latencyMs));
    if (this.failWith) {
      const headers: Record<string, string> = {};
      if (this.failWith.retryAfterSeconds !== undefined)
        headers["retry-after"] = String(this.failWith.retryAfterSeconds);
      return send(res, this.failWith.status, { error: "failing on purpose" }, headers);
    }
    const state = this.stateOf(id);
    if (!state) return send(res, 404, { error: "no such job" });
    return send(res, 200, state);
  }
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

export interface WebhookPlan {
  /** Probability that a notification is never sent. */
  loss?: number;
  /** Probability that a sent notification is sent a second time (same webhook-id). */
  duplicate?: number;
  /** Shuffle the order of the notifications. */
  reorder?: boolean;
  random?: () => number;
}

export interface Notification {
  webhookId: string;
  body: { jobId: string; state: string; seq: number; result?: unknown; error?: unknown };
}

/** Notifications for every step of every job's timeline, after loss, duplication and reordering. */
export function plannedNotifications(provider: FakeProvider, plan: WebhookPlan = {}): Notification[] {
  const random = plan.random ?? Math.random;
  const out: Notification[] = [];
  for (const [id, job] of provider.jobs) {
    job.timeline.forEach((step, index) => {
      if (random() < (plan.loss ?? 0)) return;
      const notification = {
        webhookId: `msg_${id}_${index + 1}`,
        body: { jobId: id, state: step.state, seq: index + 1, result: step.result, error: step.error },
      };
      out.push(notification);
      if (random() < (plan.duplicate ?? 0)) out.push(notification);
    });
  }
  if (plan.reorder) {
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [out[i], out[j]] = [out[j] as Notification, out[i] as Notification];
    }
  }
  return out;
}

/** POSTs one notification, signed with the Standard Webhooks scheme; resolves to the status. */
export async function sendNotification(
  target: string,
  secret: string,
  notification: Notification,
  now = Date.now(),
): Promise<number> {
  const body = JSON.stringify(notification.body);
  const headers = signStandardWebhook({
    id: notification.webhookId,
    timestampSeconds: now / 1000,
    body,
    secret,
  });
  try {
    const response = await fetch(target, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body,
    });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0;
  }
}
