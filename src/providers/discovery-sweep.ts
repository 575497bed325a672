import type { Intent } from "../core/intent-model.js";
import { isValidId } from "../core/job-id.js";
import type { Job } from "../core/model.js";
import { isTerminal } from "../core/states.js";
import type { Finality } from "../engine/finality.js";
import { engineOf } from "../engine/finality-engine.js";
import { type IngestContext, ingestInTx } from "../engine/ingest.js";
import { attachIntentInTx, markIntentAttachedInTx } from "../engine/intents.js";
import type { StoreTx } from "../store/store.js";
import type { JobLister, ListedJob } from "./discovery-types.js";

export interface SweepOptions {
  provider: string;
  lister: JobLister;
  /** Budget: list calls this sweep may make (`discover.pagesPerSweep`). */
  pagesPerSweep: number;
  /** Only jobs created this recently matter (`discover.lookbackHours`). */
  lookbackMs: number;
  signal?: AbortSignal;
  /**
   * True when the provider instance cannot be polled: a terminal state the list shows settles the
   * job then. Otherwise the job is adopted open and the reconciler's poll, due at once, settles it
   * with the result and error a list does not carry.
   */
  settleFromList?: boolean;
  /** After each page is stored: progress lines, metrics. */
  onPage?: (page: PageProgress) => void;
  /**
   * Where listed jobs live when not in this store (the sharded Worker: each job on its shard,
   * intents and the cursor on the runs home). Absent: every job is adopted here.
   */
  placement?: ListingPlacement | undefined;
}

/** A listed job as a sweep hands it to the store where it lives: with the open intent its tag names. */
export interface PlacedListing {
  listed: ListedJob;
  /** The open intent (of this provider) the job's tag names, from the sweep's store; null for none. */
  intent: Intent | null;
}

export interface AdoptOutcome {
  outcome: "adopted" | "attached" | "known";
  newlyKnown: boolean;
  settled: Job | null;
}

/**
 * Adopts a page's jobs each in the store where it lives (`adoptPlacedInTx` there), answering each
 * one's outcome in order. Each store applies its part in one transaction; a page is then applied
 * at least once (a crash before the cursor is stored applies it again, which changes nothing:
 * known jobs are left alone and an attached copy answers `attached` again).
 */
export interface ListingPlacement {
  adopt(provider: string, items: PlacedListing[]): Promise<AdoptOutcome[]>;
}

export interface PageProgress {
  provider: string;
  page: number;
  listed: number;
  adopted: number;
  attached: number;
  /** Seconds from each newly known job's creation at the provider to now. */
  lagSeconds: number[];
  /** Jobs this page's listed terminal state settled (no poll): for the detection-delay metric. */
  settled: Job[];
}

export interface SweepResult {
  provider: string;
  pages: number;
  listed: number;
  /** Jobs Finality did not know, adopted with source `discovery`. */
  adopted: number;
  /** Intents matched by the tag their job carries, and attached. */
  attached: number;
  /** Listed ids that break the job id rule (`core/job-id.ts`): skipped, so they cannot stop the sweep. */
  refused: number;
  /** The lister said this page reached the end of what is new. */
  done: boolean;
  /** The sweep stopped on a failed list call (429, 5xx, network); wait `retryAfterMs` if given. */
  failed?: { error: string; status?: number | undefined; retryAfterMs?: number | undefined };
}

/**
 * One discovery sweep of a provider instance: list pages from the stored cursor on, until the
 * lister says `done`, the page budget is spent, or a call fails. Each page is one transaction:
 * its unknown jobs adopted (a job carrying an open intent's tag attaches that intent), then the
 * lister's `resume` stored, so a crash or a restart resumes after the last page stored and a
 * page is never half applied. Jobs Finality knows already are left alone (no event, no write).
 */
export async function sweepOnce(finality: Finality, options: SweepOptions): Promise<SweepResult> {
  const { provider, lister } = options;
  const engine = engineOf(finality);
  const store = engine.store;
  const signal = options.signal ?? new AbortController().signal;
  const result: SweepResult = {
    provider,
    pages: 0,
    listed: 0,
    adopted: 0,
    attached: 0,
    refused: 0,
    done: false,
  };
  let resume = await store.getDiscoveryCursor(provider);
  while (result.pages < options.pagesPerSweep && !signal.aborted) {
    const sinceMs = engine.clock.now() - options.lookbackMs;
    const answer = await lister.list({ resume, sinceMs }, signal);
    if (answer.kind === "failed") {
      const { error, status, retryAfterMs } = answer;
      result.failed = { error, status, retryAfterMs };
      return result;
    }
    result.pages++;
    // One id no URL or store can hold must not fail the page's transaction, or every later sweep
    // would stop on the same page for good.
    const jobs = answer.jobs.filter((listed) => isValidId(listed.id));
    result.refused += answer.jobs.length - jobs.length;
    const now = engine.clock.now();
    const ctx = engine.contextFor(provider, now);
    const page = options.placement
      ? await placePage(finality, options, options.placement, jobs, answer.resume, {
          now,
          sinceMs,
          page: result.pages,
          listed: answer.jobs.length,
        })
      : await store.transaction(async (tx) => {
          const counts: PageProgress = {
            provider,
            page: result.pages,
            listed: answer.jobs.length,
            adopted: 0,
            attached: 0,
            lagSeconds: [],
            settled: [],
          };
          for (const listed of jobs) {
            if (listed.createdAt < sinceMs) continue;
            const shown = options.settleFromList === true ? listed : withoutTerminalState(listed);
            const { outcome, newlyKnown, settled } = await adoptListedInTx(tx, provider, shown, ctx);
            if (outcome !== "known") counts[outcome]++;
            if (newlyKnown) counts.lagSeconds.push(Math.max(0, now - listed.createdAt) / 1000);
            if (settled !== null) counts.settled.push(settled);
          }
          await tx.setDiscoveryCursor(provider, answer.resume, now);
          return counts;
        });
    resume = answer.resume;
    result.listed += page.listed;
    result.adopted += page.adopted;
    result.attached += page.attached;
    options.onPage?.(page);
    if (answer.done) {
      result.done = true;
      break;
    }
  }
  return result;
}

/**
 * One page through a placement: the jobs adopted where each lives, then, in this store's one
 * transaction, the intents whose jobs were attached marked so and the resume mark stored.
 */
async function placePage(
  finality: Finality,
  options: SweepOptions,
  placement: ListingPlacement,
  jobs: ListedJob[],
  resume: string | null,
  at: { now: number; sinceMs: number; page: number; listed: number },
): Promise<PageProgress> {
  const { provider } = options;
  const store = engineOf(finality).store;
  const items: PlacedListing[] = [];
  for (const listed of jobs) {
    if (listed.createdAt < at.sinceMs) continue;
    const shown = options.settleFromList === true ? listed : withoutTerminalState(listed);
    const intent = listed.tag === undefined ? null : await store.getIntent(listed.tag);
    const open = intent !== null && intent.provider === provider && intent.jobId === null;
    items.push({ listed: shown, intent: open ? intent : null });
  }
  const outcomes = await placement.adopt(provider, items);
  return store.transaction(async (tx) => {
    const counts: PageProgress = {
      provider,
      page: at.page,
      listed: at.listed,
      adopted: 0,
      attached: 0,
      lagSeconds: [],
      settled: [],
    };
    for (const [i, { listed, intent }] of items.entries()) {
      const { outcome, newlyKnown, settled } = outcomes[i] ?? {
        outcome: "known",
        newlyKnown: false,
        settled: null,
      };
      if (outcome === "attached" && intent !== null) {
        // Attached by the application meanwhile to another id: that attach stands.
        const now = await tx.getIntent(intent.key);
        if (now !== null && now.jobId === null)
          await markIntentAttachedInTx(tx, intent.key, listed.id, "discovery", at.now);
      }
      if (outcome !== "known") counts[outcome]++;
      if (newlyKnown) counts.lagSeconds.push(Math.max(0, at.now - listed.createdAt) / 1000);
      if (settled !== null) counts.settled.push(settled);
    }
    await tx.setDiscoveryCursor(provider, resume, at.now);
    return counts;
  });
}

/**
 * One listed job in the store where it lives, for a sweep run from another store (`placement`):
 * with `intent`, a copy of it is attached here (inserted first when this store has none), as
 * `adoptListedInTx` attaches a local one; a copy attached to this job already answers `attached`
 * again, so that a sweep repeated after a crash still marks the intent at home.
 */
export async function adoptPlacedInTx(
  tx: StoreTx,
  provider: string,
  { listed, intent }: PlacedListing,
  ctx: IngestContext,
): Promise<AdoptOutcome> {
  if (intent === null) return adoptListedInTx(tx, provider, listed, ctx);
  const known = { outcome: "known", newlyKnown: false, settled: null } as const;
  if ((await tx.getTombstone({ provider, id: listed.id })) !== null) return known;
  const copy = await tx.getIntent(intent.key);
  if (copy?.jobId === listed.id) return { outcome: "attached", newlyKnown: false, settled: null };
  if (
    copy === null &&
    !(await tx.insertIntent({ ...intent, jobId: null, attachedAt: null, attachedBy: null }))
  )
    return known;
  return adoptListedInTx(tx, provider, { ...listed, tag: intent.key }, ctx);
}

/** A listed terminal state is left to the poll (it brings the result); an open one is kept. */
function withoutTerminalState(listed: ListedJob): ListedJob {
  if (listed.state === undefined || !isTerminal(listed.state)) return listed;
  const { state: _state, rawState: _raw, seq: _seq, updateTime: _time, ...rest } = listed;
  return rest;
}

/**
 * One listed job: attached to the open intent whose tag it carries, else adopted when unknown
 * (due for a reconcile poll at once), else left alone. A listed state is the job's first
 * observation (source `discovery`): a job listed settled settles now, with its effects.
 */
async function adoptListedInTx(
  tx: StoreTx,
  provider: string,
  listed: ListedJob,
  ctx: IngestContext,
): Promise<{ outcome: "adopted" | "attached" | "known"; newlyKnown: boolean; settled: Job | null }> {
  const key = { provider, id: listed.id };
  const known = { outcome: "known", newlyKnown: false, settled: null } as const;
  // A job retention forgot after it settled stays forgotten: adopting it would settle it again.
  if ((await tx.getTombstone(key)) !== null) return known;
  const isKnown = (await tx.getJob(key)) !== null;
  if (listed.tag !== undefined) {
    const intent = await tx.getIntent(listed.tag);
    if (intent !== null && intent.provider === provider && intent.jobId === null) {
      const settled =
        listed.state !== undefined && !isKnown ? await observeListed(tx, listed, key, ctx) : null;
      await attachIntentInTx(tx, intent.key, listed.id, "discovery", ctx);
      return { outcome: "attached", newlyKnown: !isKnown, settled };
    }
  }
  if (isKnown) return known;
  const settled = await observeListed(tx, listed, key, ctx);
  return { outcome: "adopted", newlyKnown: true, settled };
}

async function observeListed(
  tx: StoreTx,
  listed: ListedJob,
  key: { provider: string; id: string },
  ctx: IngestContext,
): Promise<Job | null> {
  const outcome = await ingestInTx(
    tx,
    {
      ...key,
      state: listed.state ?? "pending",
      source: "discovery",
      ...(listed.rawState !== undefined ? { rawState: listed.rawState } : {}),
      ...(listed.seq !== undefined ? { seq: listed.seq } : {}),
      ...(listed.updateTime !== undefined ? { updateTime: listed.updateTime } : {}),
      ...(listed.kind !== undefined ? { kind: listed.kind } : {}),
    },
    // The provider listed it: adopted whatever the webhook policy (`registered-only` is about
    // unsigned claims of unknown jobs; this is the provider's own answer).
    { ...ctx, unknownJobs: "adopt" },
    // Found late already: checked at once rather than after the grace a fresh submission gets.
    { amend: (next) => (next.settledAt === null ? { ...next, nextCheckAt: ctx.now } : next) },
  );
  return outcome.settled ? outcome.job : null;
}
