import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { settlementPageSchema } from "../../src/http/settlement-api-schemas.js";
import { openApiApp } from "../openapi/openapi-app.js";

// The feed's answer over HTTP carries each item's `kind` and `amendment`, as the library's
// Settlement does: without them a reader filtered by kind could not tell the late kind's entry
// from a settlement (docs/http-api.md, docs/effects.md "The settlement stream").
describe("GET /v1/settlements: kind and amendment", () => {
  let built: Awaited<ReturnType<typeof openApiApp>>;
  beforeAll(async () => {
    built = await openApiApp({ runs: false, assets: false });
  });
  afterAll(() => built.close());

  const post = (body: unknown) => ({
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const page = async (query: string) => {
    const answer = await built.app.request(`/v1/settlements?${query}`);
    expect(answer.status).toBe(200);
    return settlementPageSchema.parse(await answer.json());
  };
  const streamed = async (query: string) => {
    const answer = await built.app.request(`/v1/settlements/stream?${query}`);
    const reader = answer.body!.getReader();
    let text = "";
    while (!/^data: .*\n\n/m.test(text)) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    return JSON.parse(/^data: (.*)$/m.exec(text)![1]!);
  };

  it("a job that settled without a kind, then got one: the kind's reader gets the amendment", async () => {
    await built.app.request("/v1/jobs/acme/late-1/observations", post({ state: "succeeded" }));
    await built.app.request("/v1/jobs", post({ provider: "acme", id: "late-1", kind: "render" }));
    await built.app.request("/v1/jobs", post({ provider: "acme", id: "known-1", kind: "render" }));
    await built.app.request("/v1/jobs/acme/known-1/observations", post({ state: "failed" }));

    const all = await page("provider=acme");
    expect(all.items.map(({ id, kind, amendment }) => ({ id, kind, amendment }))).toEqual([
      { id: "late-1", kind: null, amendment: false },
      { id: "known-1", kind: "render", amendment: false },
    ]);
    const renders = await page("kind=render");
    expect(renders.items.map(({ id, kind, amendment }) => ({ id, kind, amendment }))).toEqual([
      { id: "late-1", kind: "render", amendment: true },
      { id: "known-1", kind: "render", amendment: false },
    ]);
    // The stream's data is the same item.
    expect(await streamed("kind=render")).toEqual(renders.items[0]);
  });
});
