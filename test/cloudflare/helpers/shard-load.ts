import { SECRET, signWith } from "../../http/helpers/webhooks.js";

export interface SignedWebhook {
  jobId: string;
  body: string;
  headers: Record<string, string>;
}

/** The state job `i` ends in. */
export function finalStateOf(jobId: string): "succeeded" | "failed" {
  return Number(jobId.slice("job-".length)) % 7 === 0 ? "failed" : "succeeded";
}

/** A deterministic shuffle (mulberry32), so a failing run can be replayed. */
export function shuffled<T>(items: readonly T[], seed: number): T[] {
  let state = seed >>> 0;
  const random = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/**
 * Four signed webhooks per job: running (seq 1), running (seq 2), the terminal one (seq 3) and a
 * redelivery of one of the three (same webhook-id, same bytes), all shuffled together. Whatever
 * the order, each job ends in its terminal state: a lower sequence after it is ignored.
 */
export function webhookLoad(jobs: number, seed: number): SignedWebhook[] {
  const all: SignedWebhook[] = [];
  for (let i = 0; i < jobs; i++) {
    const jobId = `job-${i}`;
    const sends = [
      { jobId, state: "running", seq: 1 },
      { jobId, state: "running", seq: 2 },
      { jobId, state: finalStateOf(jobId), seq: 3, result: { n: i } },
    ].map((payload, k) => {
      const body = JSON.stringify(payload);
      return { jobId, body, headers: signWith(SECRET, body, { id: `${seed}-${jobId}-${k}` }) };
    });
    all.push(...sends, sends[i % 3] as SignedWebhook);
  }
  return shuffled(all, seed);
}

/** Runs `work` over `items` with at most `inFlight` at once. */
export async function inParallel<T>(
  items: readonly T[],
  inFlight: number,
  work: (item: T, index: number) => Promise<void>,
) {
  let next = 0;
  const lanes = Array.from({ length: Math.min(inFlight, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      await work(items[index] as T, index);
    }
  });
  await Promise.all(lanes);
}

/** Every page of a list, through the combined cursor. */
export async function allPages(
  fetchPage: (path: string) => Promise<Response>,
  path: string,
  limit: number,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let cursor: string | null = null;
  for (;;) {
    const sep = path.includes("?") ? "&" : "?";
    const response = await fetchPage(
      `${path}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    );
    if (response.status !== 200) throw new Error(`${path}: ${response.status} ${await response.text()}`);
    const page = (await response.json()) as { items: Record<string, unknown>[]; nextCursor: string | null };
    items.push(...page.items);
    if (page.nextCursor === null) return items;
    cursor = page.nextCursor;
  }
}
