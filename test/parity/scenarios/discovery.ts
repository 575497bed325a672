import { expect } from "vitest";
import { SECRET } from "../../http/helpers/webhooks.js";
import { eventually, json, post, SCALE, type Scenario } from "../scenario.js";

/**
 * A discovery sweep: jobs created at the provider that nobody registered are adopted (source
 * `discovery`), each once and readable by key (so on Workers, on its own shard), then settled by
 * the reconciler's polls; a listed job carrying an intent's tag attaches that intent.
 */
export const discovery: Scenario = {
  name: "discovery-sweep",
  config: ({ provider }) => ({
    providers: {
      disco: {
        type: "generic",
        webhook: { secrets: [SECRET] },
        poll: { url: `${provider.url}/jobs/{id}`, timeoutSeconds: 2 },
        discover: { enabled: true, url: `${provider.url}/jobs?after={cursor}`, intervalSeconds: 1 },
      },
    },
  }),
  async run(running, { provider }) {
    const count = 6 * SCALE;
    expect(
      (await post(running, "/v1/intents", { provider: "disco", key: "tagged", kind: "render" })).status,
    ).toBe(201);
    const ids = Array.from({ length: count }, (_, i) => `found-${i}`);
    for (const [i, id] of ids.entries())
      provider.addJob(
        id,
        [{ afterMs: 0, state: i % 2 ? "succeeded" : "failed" }],
        i === 0 ? { tag: "tagged" } : {},
      );

    // Adopted, each readable by key (on Workers: from its own shard).
    await eventually(running, async () => {
      for (const id of ids) expect((await json(running, `/v1/jobs/disco/${id}`)).status, id).toBe(200);
    });
    await eventually(running, async () => {
      expect((await json(running, "/v1/intents/tagged")).body).toMatchObject({
        status: "attached",
        jobId: "found-0",
      });
    });
    const listed = await json<{ items: { id: string }[] }>(running, "/v1/jobs?provider=disco&limit=500");
    expect(listed.body.items.map((j) => j.id).sort()).toEqual([...ids].sort());
    expect((await json(running, "/v1/intents/tagged")).body).toMatchObject({
      status: "attached",
      jobId: "found-0",
    });
    expect((await json(running, "/v1/jobs/disco/found-0")).body).toMatchObject({ kind: "render" });
    const events = await json<{ items: { source: string }[] }>(running, "/v1/jobs/disco/found-1/events");
    expect(events.body.items.map((e) => e.source)).toContain("discovery");
  },
};

/**
 * Every job a sweep adopted, the one carrying an intent's tag included, is polled and settles
 * (by the poll: the sweep leaves a listed terminal state to it). Runs after `discovery-sweep`, on
 * that scenario's jobs: run the two together (`-t discovery`). On Workers this provider comes
 * after several others in the combined configuration, which is what once kept its jobs unpolled
 * (each cron run's poll budget was reserved by the providers ahead of it).
 */
export const discoveredIntentSettles: Scenario = {
  name: "discovery-polls-settle",
  config: () => ({}),
  async run(running) {
    const ids = Array.from({ length: 6 * SCALE }, (_, i) => `found-${i}`);
    await eventually(
      running,
      async () => {
        for (const [i, id] of ids.entries())
          expect((await json(running, `/v1/jobs/disco/${id}`)).body, id).toMatchObject({
            state: i % 2 ? "succeeded" : "failed",
            settledBy: "reconcile",
          });
      },
      10_000,
    );
    expect((await json(running, "/v1/jobs/disco/found-0")).body).toMatchObject({ kind: "render" });
  },
};
