import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load-config.js";
import { isFinalityError } from "../../src/core/errors.js";
import { RUNS_PROVIDER } from "../../src/core/run-model.js";
import { type InProcess, inProcessApp } from "../http/helpers/in-process.js";

let ledger: InProcess | null = null;
afterEach(async () => {
  await ledger?.close();
  ledger = null;
});

describe(`the reserved provider "${RUNS_PROVIDER}"`, () => {
  it("takes no observation or registration from outside its runs, and nothing is stored", async () => {
    ledger = await inProcessApp();
    const { finality, app } = ledger;
    const refused = (error: unknown) => isFinalityError(error) && error.details.field === "provider";
    await expect(
      finality.ingest({ provider: RUNS_PROVIDER, id: "r1", state: "succeeded", source: "api" }),
    ).rejects.toSatisfy(refused);
    await expect(finality.register({ provider: RUNS_PROVIDER, id: "r1" })).rejects.toSatisfy(refused);

    const response = await app.request("/v1/jobs", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ provider: RUNS_PROVIDER, id: "r1" }),
    });
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toContain("application/problem+json");
    expect(await response.json()).toMatchObject({ code: "invalid-request", field: "provider" });
    expect(await finality.getJob({ provider: RUNS_PROVIDER, id: "r1" })).toBeNull();
    expect(await finality.jobEvents({ provider: RUNS_PROVIDER, id: "r1" })).toEqual([]);
  });

  it("cannot be configured as a provider instance", () => {
    expect(() => parseConfig({ providers: { runs: { type: "generic" } } }, {})).toThrow(
      'config error: providers.runs: is reserved: jobs of provider "runs" mirror runs on your own workers',
    );
  });
});
