import {
  FakeProvider,
  type Notification,
  plannedNotifications,
  sendNotification,
  type TimelineStep,
  type WebhookPlan,
} from "../testing/fake-provider.js";

interface TrafficOptions {
  /** Provider instance name in Finality; also the prefix of its job ids. */
  name: string;
  provider: FakeProvider;
  secret: string;
  /** The service's base URL (webhooks and the registration API). */
  serviceUrl: string;
  /** New jobs per second. */
  rate: number;
  /** Loss and duplication of webhooks; `lateShare` of them arrive 1.5–5.5 s late (out of order). */
  plan: Omit<WebhookPlan, "random" | "reorder"> & { lateShare: number };
  /** While true, the provider is "down": its webhooks are not sent. */
  down?: () => boolean;
  /** Job ids with a "/" in them, as Gemini's operations have. */
  pathIds?: boolean;
  random?: () => number;
}

interface TrafficCounts {
  jobs: number;
  webhooksSent: number;
  webhooksLost: number;
  webhooksDuplicated: number;
}

/**
 * The status line's webhook figures. A lost webhook was sent too (it never arrived), so the
 * total counts it: "400 webhooks sent: 190 lost on the way, 30 delivered twice", never
 * "206 sent, 213 lost", which reads as more lost than sent.
 */
export function webhookTally(
  counts: Pick<TrafficCounts, "webhooksSent" | "webhooksLost" | "webhooksDuplicated">,
): string {
  const sent = counts.webhooksSent + counts.webhooksLost;
  return `${sent} webhook${sent === 1 ? "" : "s"} sent: ${counts.webhooksLost} lost on the way, ${counts.webhooksDuplicated} delivered twice`;
}

export interface Traffic {
  readonly counts: TrafficCounts;
  start(): void;
  /** Stops creating jobs; webhooks already planned are still sent. */
  pause(): void;
  /** Stops everything, including planned webhooks. */
  stop(): Promise<void>;
}

const KINDS = ["video", "batch", "embedding"];

/**
 * Demo traffic for one fake provider: every second it creates jobs there with a true timeline
 * (pending → running → a terminal state; a few never finish and go stuck), registers most of
 * them with Finality as an application would, and sends their webhooks the way real senders
 * fail: some lost, some twice, some late and out of order, none while the provider is down.
 * Now and then a job the provider never heard of (its polls answer 404) and a provider that
 * contradicts itself after a job settled (a conflicting terminal state).
 */
export function createTraffic(options: TrafficOptions): Traffic {
  const random = options.random ?? Math.random;
  const counts: TrafficCounts = { jobs: 0, webhooksSent: 0, webhooksLost: 0, webhooksDuplicated: 0 };
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const inFlight = new Set<Promise<unknown>>();
  let ticker: ReturnType<typeof setInterval> | null = null;
  let stopped = false;

  const later = (ms: number, work: () => Promise<unknown>) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (stopped) return;
      const running = work().catch(() => {});
      inFlight.add(running);
      void running.finally(() => inFlight.delete(running));
    }, ms);
    timers.add(timer);
  };

  function timeline(): TimelineStep[] {
    const startMs = 500 + random() * 3000;
    const endMs = 6000 + random() * 34_000;
    const roll = random();
    if (roll < 0.02)
      return [
        { afterMs: 0, state: "pending" },
        { afterMs: startMs, state: "running" },
      ];
    const state = roll < 0.82 ? "succeeded" : roll < 0.92 ? "failed" : roll < 0.96 ? "cancelled" : "expired";
    const outcome =
      state === "succeeded"
        ? { result: { url: `https://cdn.example.com/${counts.jobs}.mp4` } }
        : state === "failed"
          ? { error: { code: "RESOURCE_EXHAUSTED", message: "quota exceeded" } }
          : {};
    return [
      { afterMs: 0, state: "pending" },
      { afterMs: startMs, state: "running" },
      { afterMs: endMs, state, ...outcome },
    ];
  }

  async function register(id: string, kind: string): Promise<void> {
    await fetch(`${options.serviceUrl}/v1/jobs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ provider: options.name, id, kind, metadata: { demo: true } }),
    }).then((response) => response.arrayBuffer());
  }

  function send(notification: Notification): Promise<unknown> {
    if (options.down?.()) {
      counts.webhooksLost++;
      return Promise.resolve();
    }
    counts.webhooksSent++;
    return sendNotification(`${options.serviceUrl}/webhooks/${options.name}`, options.secret, notification);
  }

  function createJob(): void {
    counts.jobs++;
    const n = counts.jobs;
    const id = options.pathIds ? `operations/${options.name}-${n}` : `${options.name}-${n}`;
    const kind = KINDS[n % KINDS.length] as string;
    const steps = timeline();
    options.provider.addJob(id, steps);
    if (random() < 0.6) later(random() * 300, () => register(id, kind));

    // The faults come from the fake provider's own planner, for this one job.
    const single = new FakeProvider();
    single.addJob(id, steps);
    const planned = plannedNotifications(single, { ...options.plan, random });
    counts.webhooksLost += steps.length - new Set(planned.map((p) => p.webhookId)).size;
    counts.webhooksDuplicated += planned.length - new Set(planned.map((p) => p.webhookId)).size;
    for (const notification of planned) {
      const step = steps[notification.body.seq - 1];
      const lateMs = random() < options.plan.lateShare ? 1500 + random() * 4000 : random() * 300;
      later((step?.afterMs ?? 0) + lateMs, () => send(notification));
    }

    const last = steps.at(-1);
    if (last && last.state === "succeeded" && random() < 0.02) {
      // A provider bug: a different terminal state after the job succeeded.
      const contradiction: Notification = {
        webhookId: `msg_${id}_contradiction`,
        body: { jobId: id, state: "failed", seq: steps.length + 1, error: { message: "provider bug" } },
      };
      later(last.afterMs + 4000, () => send(contradiction));
    }
    if (random() < 0.02) {
      // The application registers a job the provider never created: polls answer 404.
      later(random() * 500, () => register(`${options.name}-ghost-${n}`, kind));
    }
  }

  return {
    counts,
    start() {
      if (ticker !== null || stopped) return;
      let owed = 0;
      ticker = setInterval(() => {
        owed += options.rate;
        for (; owed >= 1; owed--) createJob();
      }, 1000);
    },
    pause() {
      if (ticker !== null) clearInterval(ticker);
      ticker = null;
    },
    async stop() {
      stopped = true;
      this.pause();
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      await Promise.all([...inFlight]);
    },
  };
}
