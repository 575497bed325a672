import { type Random, seededRandom } from "../../src/core/clock.js";
import { signWith } from "../http/helpers/webhooks.js";

/** One webhook the client must get a 200 for: its id is fixed, so a retry is a redelivery. */
export interface PlannedWebhook {
  deliveryId: string;
  jobId: string;
  body: string;
}

export interface ClientLog {
  /** Every delivery id answered 200, with the job it was for. */
  acked: Map<string, string>;
  registered: Set<string>;
  requests: number;
  failures: number;
}

/**
 * A real HTTP client under load: registers jobs and sends their webhooks, a few at a time, to
 * whatever URL the service has now (it changes at every restart). A request that fails (the
 * service was killed under it) goes back in the queue and is sent again with the same id.
 */
export class ChaosClient {
  readonly log: ClientLog = { acked: new Map(), registered: new Set(), requests: 0, failures: 0 };
  private readonly queue: ({ kind: "register"; jobId: string } | ({ kind: "webhook" } & PlannedWebhook))[] =
    [];
  private readonly waiters: { predicate: () => boolean; resolve: () => void }[] = [];
  private readonly random: Random;
  private url = "";
  private generation = 0;
  /** Answers (any status) the client has received: the clock for "a random moment". */
  answers = 0;
  /** Set once no more kills come: a failure is then retried at once instead of awaiting a restart. */
  final = false;

  constructor(
    seed: number,
    private readonly provider: string,
    private readonly secret: string,
  ) {
    this.random = seededRandom(seed);
  }

  /** The service's URL after a (re)start; requests that failed meanwhile go out again to it. */
  setUrl(url: string): void {
    this.url = url;
    this.generation++;
    this.notify();
  }

  add(jobId: string, webhooks: PlannedWebhook[]): void {
    this.queue.push(
      { kind: "register", jobId },
      ...webhooks.map((w) => ({ kind: "webhook" as const, ...w })),
    );
  }

  get pending(): number {
    return this.queue.length;
  }

  /** Resolves once `predicate` holds, checked after every answer. */
  until(predicate: () => boolean): Promise<void> {
    if (predicate()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ predicate, resolve }));
  }

  /** `concurrency` loops, each taking the next item (a random one of the first few: reordering). */
  run(concurrency: number, done: () => boolean): Promise<void> {
    return Promise.all(Array.from({ length: concurrency }, () => this.loop(done))).then(() => {});
  }

  private async loop(done: () => boolean): Promise<void> {
    while (!done()) {
      if (this.queue.length === 0) {
        await this.until(() => this.queue.length > 0 || done());
        continue;
      }
      const index = Math.floor(this.random() * Math.min(4, this.queue.length));
      const [item] = this.queue.splice(index, 1);
      if (!item) continue;
      const generation = this.generation;
      const ok = await this.send(item).catch(() => false);
      this.log.requests++;
      if (!ok) {
        this.log.failures++;
        this.queue.push(item);
        // The service is down: wait for it to come back rather than spin on refused connections.
        if (!this.final) await this.until(() => this.generation !== generation || this.final || done());
      }
      this.notify();
    }
  }

  private async send(item: ChaosClient["queue"][number]): Promise<boolean> {
    if (item.kind === "register") {
      const response = await fetch(`${this.url}/v1/jobs`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ provider: this.provider, id: item.jobId }),
      });
      await response.arrayBuffer();
      this.answers++;
      if (response.status === 200 || response.status === 201) this.log.registered.add(item.jobId);
      return response.status === 200 || response.status === 201;
    }
    const headers = signWith(this.secret, item.body, { id: item.deliveryId });
    const response = await fetch(`${this.url}/webhooks/${this.provider}`, {
      method: "POST",
      headers,
      body: item.body,
    });
    await response.arrayBuffer();
    this.answers++;
    if (response.status !== 200) return false;
    this.log.acked.set(item.deliveryId, item.jobId);
    return true;
  }

  notify(): void {
    for (const waiter of this.waiters.splice(0)) {
      if (waiter.predicate()) waiter.resolve();
      else this.waiters.push(waiter);
    }
  }
}
