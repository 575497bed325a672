import { expect } from "vitest";
import { SECRET, signWith } from "../../http/helpers/webhooks.js";
import { json, post, type Scenario } from "../scenario.js";

const webhook = (
  running: Parameters<Scenario["run"]>[0],
  provider: string,
  id: string,
  state: string,
  seq: number,
) => {
  const body = JSON.stringify({ jobId: id, state, seq });
  return json(running, `/webhooks/${provider}`, { method: "POST", headers: signWith(SECRET, body), body });
};

/**
 * Registration before and after webhooks, under `adopt` and under `registered-only`: a job
 * registered first takes its webhooks; under `adopt` a webhook first creates the job and the late
 * registration finds it; under `registered-only` the webhook is parked (listed in /v1/parked, the
 * job a 404 with `reason: "parked"`) and applied, in order, when the job is registered.
 */
export const registration: Scenario = {
  name: "registration-order",
  config: () => ({
    providers: {
      "reg-adopt": { type: "generic", webhook: { secrets: [SECRET] } },
      "reg-only": { type: "generic", webhook: { secrets: [SECRET] }, unknownJobs: "registered-only" },
    },
  }),
  async run(running) {
    for (const provider of ["reg-adopt", "reg-only"]) {
      const first = await post(running, "/v1/jobs", { provider, id: "before", kind: "render" });
      expect(first.status).toBe(201);
      expect((await webhook(running, provider, "before", "succeeded", 2)).body).toMatchObject({
        outcome: "applied",
      });
      expect((await json(running, `/v1/jobs/${provider}/before`)).body).toMatchObject({
        state: "succeeded",
        kind: "render",
      });
    }

    expect((await webhook(running, "reg-adopt", "after", "running", 1)).body).toMatchObject({
      outcome: "applied",
    });
    const late = await post(running, "/v1/jobs", { provider: "reg-adopt", id: "after", kind: "render" });
    expect(late.status).toBe(200);
    expect(late.body).toMatchObject({ state: "running", kind: "render" });

    // registered-only: two webhooks out of order are parked, then applied in order on registration.
    expect((await webhook(running, "reg-only", "after", "succeeded", 2)).body).toMatchObject({
      outcome: "parked",
    });
    expect((await webhook(running, "reg-only", "after", "running", 1)).body).toMatchObject({
      outcome: "parked",
    });
    const missing = await json(running, "/v1/jobs/reg-only/after");
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ reason: "parked" });
    const parked = await json<{ items: { id: string }[] }>(running, "/v1/parked?provider=reg-only");
    expect(parked.body.items.map((p) => p.id)).toEqual(["after", "after"]);
    const registered = await post(running, "/v1/jobs", { provider: "reg-only", id: "after" });
    expect(registered.status).toBe(201);
    expect((await json(running, "/v1/jobs/reg-only/after")).body).toMatchObject({ state: "succeeded" });
    expect((await json<{ items: unknown[] }>(running, "/v1/parked?provider=reg-only")).body.items).toEqual(
      [],
    );

    // A bad registration is a typed 400 and stores nothing.
    const bad = await post(running, "/v1/jobs", { provider: "reg-only", id: "typo", kidn: "x" });
    expect(bad.status).toBe(400);
    expect(bad.type).toMatch(/^application\/problem\+json/);
    expect((await json(running, "/v1/jobs/reg-only/typo")).status).toBe(404);
  },
};
