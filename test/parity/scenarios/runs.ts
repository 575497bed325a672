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
