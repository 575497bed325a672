import { expect, it } from "vitest";
import type { JobLister, ListedJob, ListResult } from "../../../src/providers/discovery-types.js";
import type { FakeServer } from "../../fakes/fake-server.js";

/** One job to store in a provider fake, as the contract describes it. */
export interface SeededJob {
  id: string;
  createdAt: number;
  tag?: string;
}

/** A provider's lister over its fake, as the shared contract drives it. */
export interface ListerSubject {
  server: FakeServer;
  /** The kind every listed job carries. */
  kind: string;
  /** Jobs per page the lister asks for (the provider's maximum or fixed page size). */
  pageSize: number;
  /** False when the provider documents no order: every page is read on every sweep. */
  ordered: boolean;
  /** False when the list item carries nothing the submitter chose: no job has a tag. */
  taggable: boolean;
  seed(jobs: SeededJob[]): void;
  /** A new lister, as after a restart, against `baseUrl` (default: the fake). */
  lister(baseUrl?: string): JobLister;
  /** The remote id a seeded job is listed under, when the provider names it (Gemini `batches/…`). */
  listedId?(id: string): string;
  /** The list endpoint calls the fake has answered so far. */
  listCalls(): number;
  /** A page token in the provider's format that it does not know (expired, or its `after` id gone). */
  staleCursor: string;
  /** A base URL where nothing listens (for the network failure). */
  deadUrl: string;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const signal = () => AbortSignal.timeout(10_000);

/** `count` jobs, the newest `newestAgoMs` ago, then one every `stepMs` further back. */
export function jobsAgo(
  prefix: string,
  count: number,
  newestAgoMs: number,
  stepMs = 10 * MINUTE,
): SeededJob[] {
  const now = Date.now();
  return Array.from({ length: count }, (_, i) => ({
    id: `${prefix}${i}`,
    createdAt: now - newestAgoMs - i * stepMs,
  }));
}

interface Sweep {
  jobs: ListedJob[];
  resume: string | null;
  results: ListResult[];
}

/** Lists until done or a failure, as the discovery sweep does. */
export async function sweep(lister: JobLister, resume: string | null, sinceMs: number): Promise<Sweep> {
  const result: Sweep = { jobs: [], resume, results: [] };
  for (let call = 0; call < 50; call++) {
    const page = await lister.list({ resume: result.resume, sinceMs }, signal());
    result.results.push(page);
    if (page.kind === "failed") return result;
    result.jobs.push(...page.jobs);
    result.resume = page.resume;
    if (page.done) return result;
  }
  throw new Error("the sweep never ended");
}

const ids = (jobs: { id: string }[]) => jobs.map((job) => job.id);

/** The listed ids are these: in this order on an ordered list, as a set on an unordered one. */
function expectIds(s: ListerSubject, jobs: ListedJob[], seeded: (string | undefined)[]): void {
  const expected = seeded.map((id) => (id === undefined || s.listedId === undefined ? id : s.listedId(id)));
  if (s.ordered) expect(ids(jobs)).toEqual(expected);
  else expect(ids(jobs).sort()).toEqual([...expected].sort());
}

/** The guarantees every provider's lister gives, run against its fake over real HTTP. */
export function listerContract(subject: () => ListerSubject): void {
  const since = () => Date.now() - 48 * HOUR;

  it("pages through several pages newest first, then says it is done", async () => {
    const s = subject();
    const seeded = jobsAgo("p", s.pageSize * 2 + s.pageSize / 2, MINUTE);
    s.seed(seeded);
    const before = s.listCalls();
    const run = await sweep(s.lister(), null, since());
    expectIds(s, run.jobs, ids(seeded));
    expect(run.jobs.every((job) => job.kind === s.kind)).toBe(true);
    expect(s.listCalls() - before).toBe(3);
    expect(run.results.map((r) => r.kind === "page" && r.done)).toEqual([false, false, true]);
  });

  it("a resume carried to a new lister (a restart) costs only what is new", async () => {
    const s = subject();
    const old = jobsAgo("o", s.pageSize * 2, HOUR);
    s.seed(old);
    const first = await sweep(s.lister(), null, since());
    expect(first.jobs).toHaveLength(old.length);
    // An unordered list's mark lags one sweep behind (SweepState.last): it settles after two.
    const settled = s.ordered ? first : await sweep(s.lister(), first.resume, since());
    const fresh = jobsAgo("n", 3, MINUTE, MINUTE);
    s.seed(fresh);
    const before = s.listCalls();
    const second = await sweep(s.lister(), settled.resume, since());
    // The newest job already seen is read again (OVERLAP_MS); nothing older.
    const expected = s.ordered ? 1 : Math.ceil((old.length + fresh.length) / s.pageSize);
    expect(s.listCalls() - before).toBe(expected);
    expectIds(s, second.jobs, [...ids(fresh), old[0]?.id]);
  });

  it("a job that shows up late in the list, created just before the newest seen, is still found", async () => {
    const s = subject();
    const old = jobsAgo("l", 3, HOUR);
    s.seed(old);
    const first = await sweep(s.lister(), null, since());
    const late = { id: "late0", createdAt: (old[0]?.createdAt ?? 0) - 30_000 };
    s.seed([late]);
    const second = await sweep(s.lister(), first.resume, since());
    expect(ids(second.jobs)).toContain(s.listedId ? s.listedId("late0") : "late0");
  });

  it("a restart in the middle of a sweep resumes at the page it was on", async () => {
    const s = subject();
    const seeded = jobsAgo("m", s.pageSize * 2, MINUTE);
    s.seed(seeded);
    const page1 = await s.lister().list({ resume: null, sinceMs: since() }, signal());
    if (page1.kind !== "page") throw new Error(page1.error);
    expect(page1.done).toBe(false);
    const rest = await sweep(s.lister(), page1.resume, since());
    expectIds(s, [...page1.jobs, ...rest.jobs], ids(seeded));
  });

  it("a 429 in the middle of a sweep stops it with Retry-After; the next call resumes there", async () => {
    const s = subject();
    const seeded = jobsAgo("r", s.pageSize * 2 + 1, MINUTE);
    s.seed(seeded);
    const lister = s.lister();
    const page1 = await lister.list({ resume: null, sinceMs: since() }, signal());
    if (page1.kind !== "page") throw new Error(page1.error);
    s.server.failNext = { status: 429, count: 1, retryAfter: "7" };
    const limited = await lister.list({ resume: page1.resume, sinceMs: since() }, signal());
    expect(limited).toMatchObject({ kind: "failed", status: 429, retryAfterMs: 7000 });
    const before = s.listCalls();
    const rest = await sweep(lister, page1.resume, since());
    expect(s.listCalls() - before).toBe(2);
    expectIds(s, [...page1.jobs, ...rest.jobs], ids(seeded));
  });

  it("jobs older than sinceMs are not listed, and on an ordered list they end the sweep", async () => {
    const s = subject();
    const recent = jobsAgo("s", s.pageSize + s.pageSize / 2, MINUTE);
    const ancient = jobsAgo("a", s.pageSize * 2, 50 * HOUR);
    s.seed([...ancient, ...recent]);
    const before = s.listCalls();
    const run = await sweep(s.lister(), null, since());
    expectIds(s, run.jobs, ids(recent));
    expect(s.listCalls() - before).toBe(s.ordered ? 2 : 4);
  });

  it("reads back the tag the submitter set, and none where none was set", async () => {
    const s = subject();
    const [a, b] = jobsAgo("t", 2, MINUTE);
    s.seed([{ ...(a as SeededJob), tag: "order-4711" }, b as SeededJob]);
    const run = await sweep(s.lister(), null, since());
    const tags = Object.fromEntries(run.jobs.map((job) => [job.id, job.tag]));
    const listed = (id: string | undefined) => (s.listedId ? s.listedId(String(id)) : String(id));
    expect(tags).toEqual({
      [listed(a?.id)]: s.taggable ? "order-4711" : undefined,
      [listed(b?.id)]: undefined,
    });
  });

  it("a page token the provider refuses starts the sweep again from the top", async () => {
    const s = subject();
    const seeded = jobsAgo("x", 5, MINUTE);
    s.seed(seeded);
    const stale = JSON.stringify({ mark: null, top: null, cursor: s.staleCursor });
    const before = s.listCalls();
    const run = await sweep(s.lister(), stale, since());
    expectIds(s, run.jobs, ids(seeded));
    expect(run.results[0]).toMatchObject({ kind: "page", jobs: [], done: false });
    expect(s.listCalls() - before).toBe(2);
  });

  it("a resume it cannot read (another version's) starts a full sweep instead of failing", async () => {
    const s = subject();
    const seeded = jobsAgo("u", 3, MINUTE);
    s.seed(seeded);
    for (const resume of ["not json", "[1,2]", '{"mark":"x","cursor":42}']) {
      const run = await sweep(s.lister(), resume, since());
      expectIds(s, run.jobs, ids(seeded));
    }
  });

  it("a 5xx and an unreachable provider are failures that say so", async () => {
    const s = subject();
    s.server.failNext = { status: 503, count: 1 };
    const unavailable = await s.lister().list({ resume: null, sinceMs: since() }, signal());
    expect(unavailable).toMatchObject({ kind: "failed", status: 503 });
    const unreachable = await s.lister(s.deadUrl).list({ resume: null, sinceMs: since() }, signal());
    expect(unreachable.kind).toBe("failed");
    if (unreachable.kind === "failed") expect(unreachable.error).toMatch(/unreachable: ECONNREFUSED/);
  });
}

/** A loopback URL where nothing listens: a port that was free a moment ago. */
export async function closedPortUrl(): Promise<string> {
  const { createServer } = await import("node:net");
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return `http://127.0.0.1:${address.port}`;
}
