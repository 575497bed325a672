import { writeFileSync } from "node:fs";
import { EffectReceiver } from "../../helpers/receiver.js";
import { type Service, startService, tempDir } from "../../http/helpers/service.js";
import { postJson, SECRET, sendWebhook } from "../../http/helpers/webhooks.js";

export const TOKEN = "dashboard-test-token-0123456789";
export const STATES = ["pending", "running", "succeeded", "failed"] as const;
/** The job whose timeline holds every kind of refused webhook; its id holds a "/". */
export const STORY = { provider: "acme", id: "story/dup-stale" } as const;

export interface Ledger {
  service: Service;
  receiver: EffectReceiver;
  dbPath: string;
  configPath: string;
  /** Headers for the JSON API (the bearer token when one is set). */
  headers: Record<string, string>;
  close(): Promise<void>;
}

/**
 * `finality serve` as a child process on its own SQLite file, with two providers, an effect on
 * acme's successes delivered to a receiver that refuses everything until told otherwise (so
 * effects go dead after one attempt), and no reconcile polls (a grace of an hour).
 */
export async function startLedger(
  options: { apiToken?: string; extraConfig?: Record<string, unknown> } = {},
) {
  const dir = tempDir();
  const receiver = new EffectReceiver();
  receiver.decide = () => 500;
  await receiver.listen();
  const configPath = dir.file("finality.config.json");
  const provider = { type: "generic", webhook: { secrets: [SECRET] } };
  writeFileSync(
    configPath,
    JSON.stringify({
      ...(options.apiToken ? { server: { apiToken: options.apiToken } } : {}),
      providers: { acme: provider, beta: provider },
      reconcile: { graceSeconds: 3600 },
      effects: [
        { name: "notify", url: receiver.url, secret: SECRET, on: ["succeeded"], providers: ["acme"] },
      ],
      effectDelivery: { maxAttempts: 1, retrySeconds: [1], pollIntervalSeconds: 0.2 },
      workers: { sweepIntervalSeconds: 3600 },
      ...options.extraConfig,
    }),
  );
  const dbPath = dir.file("ledger.db");
  const service = await startService({ db: dbPath, args: ["--config", configPath] });
  const headers: Record<string, string> = options.apiToken
    ? { authorization: `Bearer ${options.apiToken}` }
    : {};
  return {
    service,
    receiver,
    dbPath,
    configPath,
    headers,
    async close() {
      await service.stop();
      await receiver.close();
      dir.cleanup();
    },
  } satisfies Ledger;
}

let sent = 0;

/** One signed webhook; fails the test unless the service answered 200. */
export async function webhook(
  ledger: Ledger,
  provider: string,
  body: { jobId: string; state: string; seq?: number },
  id = `msg_seed_${++sent}`,
): Promise<Record<string, unknown>> {
  const answer = await sendWebhook(ledger.service.url, provider, body, { id });
  if (answer.status !== 200)
    throw new Error(`webhook answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body;
}

/**
 * 24 jobs over two providers and four states (a few registered with a kind first), and the
 * story job: running (seq 2), a stale running (seq 1), succeeded (seq 3), the same delivery
 * again, the same state under a new delivery id, and a late running (seq 4, lower rank).
 */
export async function seedJobs(ledger: Ledger): Promise<void> {
  for (let i = 0; i < 24; i++) {
    const provider = i % 2 === 0 ? "acme" : "beta";
    const id = `bulk-${String(i).padStart(2, "0")}`;
    if (i % 3 === 0) await register(ledger, { provider, id, kind: i % 2 === 0 ? "video" : "batch" });
    await webhook(ledger, provider, { jobId: id, state: STATES[Math.floor(i / 2) % 4] as string, seq: 1 });
  }
  await webhook(ledger, STORY.provider, { jobId: STORY.id, state: "running", seq: 2 }, "msg_story_1");
  await webhook(ledger, STORY.provider, { jobId: STORY.id, state: "running", seq: 1 }, "msg_story_2");
  await webhook(ledger, STORY.provider, { jobId: STORY.id, state: "succeeded", seq: 3 }, "msg_story_3");
  await webhook(ledger, STORY.provider, { jobId: STORY.id, state: "succeeded", seq: 3 }, "msg_story_3");
  await webhook(ledger, STORY.provider, { jobId: STORY.id, state: "succeeded", seq: 3 }, "msg_story_4");
  await webhook(ledger, STORY.provider, { jobId: STORY.id, state: "running", seq: 4 }, "msg_story_5");
}

export async function register(ledger: Ledger, job: { provider: string; id: string; kind?: string }) {
  const answer = await postJson(`${ledger.service.url}/v1/jobs`, job, ledger.headers);
  if (answer.status >= 300) throw new Error(`register answered ${answer.status}`);
  return answer.body;
}

/** Three runs on your own workers; worker-a claims the first and starts it (it holds a lease). */
export async function seedRuns(ledger: Ledger): Promise<string[]> {
  const url = ledger.service.url;
  const ids: string[] = [];
  for (const kind of ["render", "render", "transcode"]) {
    const created = await postJson(`${url}/v1/runs`, { kind, input: { n: ids.length } }, ledger.headers);
    ids.push(String(created.body.id));
  }
  const claimed = await postJson(
    `${url}/v1/workers/worker-a/claim`,
    { kinds: ["render"], leaseSeconds: 300 },
    ledger.headers,
  );
  const attempt = claimed.body.attempt as { id: string; generation: number };
  await postJson(
    `${url}/v1/attempts/${attempt.id}/events`,
    { generation: attempt.generation, sequence: 1, type: "started" },
    ledger.headers,
  );
  return ids;
}

/** Every item of an API listing, following cursors. */
export async function listAll<T = Record<string, unknown>>(
  ledger: Ledger,
  path: string,
  query: Record<string, string> = {},
): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | null = null;
  do {
    const search = new URLSearchParams({ ...query, limit: "500", ...(cursor ? { cursor } : {}) });
    const response = await fetch(`${ledger.service.url}${path}?${search}`, { headers: ledger.headers });
    if (!response.ok) throw new Error(`${path} answered ${response.status}`);
    const page = (await response.json()) as { items: T[]; nextCursor?: string | null };
    items.push(...page.items);
    cursor = page.nextCursor ?? null;
  } while (cursor !== null);
  return items;
}

/**
 * Re-checks `check` until it holds: for state only the database shows (a commit that follows
 * an answer we saw), where no event announces it. Fails after `timeoutMs`.
 */
export async function eventually(
  check: () => Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
