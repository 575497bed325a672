import { seededRandom } from "../../src/core/clock.js";
import type { Notification } from "../../src/testing/fake-provider.js";
import { sendNotification } from "../../src/testing/fake-provider.js";

/** A job's notifications: running (seq 1), running (seq 2), then its terminal state (seq 3). */
export function timelineNotifications(id: string, terminal: string): Notification[] {
  return [
    { webhookId: `msg_${id}_1`, body: { jobId: id, state: "running", seq: 1 } },
    { webhookId: `msg_${id}_2`, body: { jobId: id, state: "running", seq: 2 } },
    { webhookId: `msg_${id}_3`, body: { jobId: id, state: terminal, seq: 3, result: { id } } },
  ];
}

/** Pads `notifications` with redeliveries (same webhook-id) up to `total`, then shuffles, seeded. */
export function withDuplicatesShuffled(
  notifications: Notification[],
  total: number,
  seed: number,
): Notification[] {
  const random = seededRandom(seed);
  const out = [...notifications];
  while (out.length < total)
    out.push(notifications[Math.floor(random() * notifications.length)] as Notification);
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as Notification, out[i] as Notification];
  }
  return out;
}

/**
 * Sends every notification round-robin across `targets` with `concurrency` in flight, like a
 * load balancer in front of replicas: a target that refuses the connection is skipped for the
 * next one. Resolves with the webhook-ids acknowledged with a 200.
 */
export async function sendRoundRobin(
  targets: () => string[],
  secret: string,
  notifications: Notification[],
  concurrency: number,
  onSent?: (sent: number) => void,
): Promise<Set<string>> {
  const acknowledged = new Set<string>();
  let next = 0;
  let turn = 0;
  let sent = 0;
  async function lane(): Promise<void> {
    for (;;) {
      const index = next++;
      const notification = notifications[index];
      if (!notification) return;
      for (let tries = 0; ; tries++) {
        const live = targets();
        const target = live[turn++ % live.length];
        if (!target) throw new Error("no replica left");
        const status = await sendNotification(`${target}/webhooks/acme`, secret, notification);
        if (status === 200) {
          acknowledged.add(notification.webhookId);
          break;
        }
        if (status !== 0 && status < 500) throw new Error(`webhook answered ${status}`);
        if (tries > 20) throw new Error(`webhook ${notification.webhookId} failed ${tries} times`);
      }
      onSent?.(++sent);
    }
  }
  await Promise.all(Array.from({ length: concurrency }, lane));
  return acknowledged;
}
