import { expect } from "vitest";
import { eventually, json, post, type Scenario } from "../scenario.js";

export const POOL_TOKEN = "parity-pool-token-0123456789";
const asPool = { authorization: `Bearer ${POOL_TOKEN}` };

interface Claim {
  run: { id: string; status: string };
  attempt: { id: string; generation: number };
}

/**
 * Runs: a claim, heartbeats and events finish a run; a claim that starts its run (`start`) and
 * whose worker then goes silent loses its lease, its late heartbeat is refused (409 stale-generation, nothing changed) and the run is
 * claimed again with a higher generation, by a claim with `start` whose worker reports from
 * sequence 0 (the claim uses up none of the worker's sequences).
 */
export const runs: Scenario = {
  name: "runs-claim-heartbeat-expiry",
  config: () => ({
    workers: { pools: { default: { token: POOL_TOKEN } }, retryBaseSeconds: 0.1, retryMaxSeconds: 0.2 },
  }),
  async run(running) {
    const claim = async (leaseSeconds: number, start = false) => {
      const answer = await post(
        running,
        "/v1/workers/parity-w/claim",
        { kinds: ["parity"], waitSeconds: 5, leaseSeconds, start },
        asPool,
      );
      expect(answer.status).toBe(200);
      return answer.body as unknown as Claim;
    };
    const event = (c: Claim, sequence: number, type: string, extra: Record<string, unknown> = {}) =>
      post(
        running,
        `/v1/attempts/${c.attempt.id}/events`,
        { generation: c.attempt.generation, sequence, type, ...extra },
        asPool,
      );

    const done = await post(running, "/v1/runs", { kind: "parity", input: { n: 1 } });
    expect(done.status).toBe(201);
    const first = await claim(30);
    expect(first.run.id).toBe(done.body.id);
    expect(
      (
        await post(
          running,
          `/v1/attempts/${first.attempt.id}/heartbeat`,
          { generation: first.attempt.generation },
          asPool,
        )
      ).status,
    ).toBe(200);
    expect((await event(first, 1, "started")).status).toBe(200);
    expect((await event(first, 2, "succeeded", { output: { ok: true } })).body).toMatchObject({
      outcome: "applied",
    });
    expect((await event(first, 2, "succeeded", { output: { ok: true } })).body).toMatchObject({
      outcome: "duplicate",
    });
    expect((await json(running, `/v1/runs/${first.run.id}`)).body).toMatchObject({
      status: "succeeded",
      output: { ok: true },
    });

    const silent = await post(running, "/v1/runs", { kind: "parity", input: { n: 2 }, maxAttempts: 3 });
    // Claimed with `start` (the worker client's way): running at once, no `started` call of its own.
    const lost = await claim(1, true);
    expect(lost.run).toMatchObject({ id: silent.body.id, status: "running" });
    expect((await json(running, `/v1/jobs/runs/${lost.run.id}`)).body).toMatchObject({ state: "running" });
    // No heartbeat: the lease runs out and the sweep (serve's loop, the runs home's alarm) gives the run back.
    await eventually(running, async () => {
      const run = await json<{ attempts: { status: string; error: { code: string } | null }[] }>(
        running,
        `/v1/runs/${lost.run.id}`,
      );
      expect(run.body.attempts[0]).toMatchObject({
        status: "lost",
        error: { code: "REMOTE_RUN_LEASE_EXPIRED" },
      });
    });
    const late = await post(
      running,
      `/v1/attempts/${lost.attempt.id}/heartbeat`,
      { generation: lost.attempt.generation },
      asPool,
    );
    expect(late.status).toBe(409);
    expect(late.type).toMatch(/^application\/problem\+json/);
    const again = await claim(30, true);
    expect(again.run.id).toBe(lost.run.id);
    expect(again.attempt.generation).toBeGreaterThan(lost.attempt.generation);
    // The claim's `started` uses up no sequence: a worker numbering from 0 is heard.
    expect((await event(again, 0, "succeeded", { output: { ok: 2 } })).body).toMatchObject({
      outcome: "applied",
    });
    expect((await json(running, `/v1/runs/${lost.run.id}`)).body).toMatchObject({ status: "succeeded" });
    // The run is mirrored as a job of provider `runs`.
    expect((await json(running, `/v1/jobs/runs/${lost.run.id}`)).body).toMatchObject({ state: "succeeded" });
  },
};

/**
 * A worker's end that claims its next run in the same call (`next`): the answer carries the next
 * run, started (`start`); the same end sent again (its answer lost) is a duplicate that answers
 * the same claim, and claims nothing more; with nothing queued `next` is null; a report that is
 * not an end may not ask (400, problem+json, field `next`), nor may a fenced-off end (409), and
 * neither claims anything.
 */
export const runsEndClaimsNext: Scenario = {
  name: "runs-end-claims-next",
  config: () => ({ workers: { pools: { default: { token: POOL_TOKEN } } } }),
  async run(running) {
    const kinds = ["parity-next"];
    const enqueue = async (n: number) => {
      const answer = await post(running, "/v1/runs", { kind: kinds[0], input: { n } });
      expect(answer.status).toBe(201);
      return answer.body.id as string;
    };
    const end = (c: Claim, sequence: number, type: string, next?: Record<string, unknown>) =>
      post(
        running,
        `/v1/attempts/${c.attempt.id}/events`,
        { generation: c.attempt.generation, sequence, type, ...(next ? { next } : {}) },
        asPool,
      );
    const ids = [await enqueue(1), await enqueue(2), await enqueue(3)];
    const claimed = await post(running, "/v1/workers/parity-n/claim", { kinds, start: true }, asPool);
    expect(claimed.status).toBe(200);
    const first = claimed.body as unknown as Claim;
    expect(first.run.id).toBe(ids[0]);

    const notAnEnd = await end(first, 1, "progress", { kinds });
    expect(notAnEnd.status).toBe(400);
    expect(notAnEnd.type).toMatch(/^application\/problem\+json/);
    expect(notAnEnd.body).toMatchObject({ field: "next" });
    const stale = await post(
      running,
      `/v1/attempts/${first.attempt.id}/events`,
      { generation: first.attempt.generation + 1, sequence: 1, type: "succeeded", next: { kinds } },
      asPool,
    );
    expect(stale.status).toBe(409);

    const ended = await end(first, 1, "succeeded", { kinds, start: true, leaseSeconds: 60 });
    expect(ended.status).toBe(200);
    expect(ended.body).toMatchObject({ outcome: "applied", runStatus: "succeeded" });
    const next = ended.body.next as unknown as Claim & { attempt: { leaseSeconds: number } };
    expect(next.run).toMatchObject({ id: ids[1], status: "running" });
    expect(next.attempt.leaseSeconds).toBe(60);
    // Sent again, as a worker whose answer was lost would: the same claim, nothing more claimed.
    const again = await end(first, 1, "succeeded", { kinds, start: true, leaseSeconds: 60 });
    expect(again.body).toMatchObject({ outcome: "duplicate", next: { attempt: { id: next.attempt.id } } });
    expect((await json(running, `/v1/runs/${ids[2]}`)).body).toMatchObject({
      status: "queued",
      attemptCount: 0,
    });
    expect((await json(running, `/v1/jobs/runs/${ids[0]}`)).body).toMatchObject({ state: "succeeded" });
    expect((await json(running, `/v1/jobs/runs/${ids[1]}`)).body).toMatchObject({ state: "running" });

    const third = (await end(next, 0, "succeeded", { kinds, start: true })).body.next as unknown as Claim;
    expect(third.run.id).toBe(ids[2]);
    const last = await end(third, 0, "cancelled", { kinds });
    expect(last.body).toMatchObject({ outcome: "applied", runStatus: "cancelled", next: null });
    expect((await json(running, `/v1/runs/${ids[1]}`)).body).toMatchObject({ status: "succeeded" });
  },
};
