import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { z } from "zod";
import { listQuerySchema as effectListQuery } from "../../src/http/effect-routes.js";
import { listQuerySchema as intentListQuery } from "../../src/http/intent-routes.js";
import { eventsQuerySchema, listQuerySchema as jobListQuery } from "../../src/http/job-routes.js";
import { listQuerySchema as parkedListQuery } from "../../src/http/parked-routes.js";
import { settlementListQuerySchema } from "../../src/http/settlement-routes.js";
import { runEventsQuerySchema, runListQuerySchema } from "../../src/runs/run-validation.js";
import { type InProcess, inProcessApp } from "./helpers/in-process.js";

// One rule for every list route's filters: a filter over a closed set of values (a state, a
// status) is validated against that set, so `?state=done` is a 400 naming the field, not an empty
// page that looks like "nothing is done". Each list query schema is walked: a field whose name
// says it is a state or status must be an enum. Then each such filter is tried over HTTP.

const LIST_QUERIES: Record<string, z.ZodObject> = {
  "/v1/jobs": jobListQuery,
  "/v1/jobs/:provider/:id/events": eventsQuerySchema,
  "/v1/effects": effectListQuery,
  "/v1/intents": intentListQuery,
  "/v1/parked": parkedListQuery,
  "/v1/settlements": settlementListQuerySchema,
  "/v1/runs": runListQuerySchema,
  "/v1/runs/:id/events": runEventsQuerySchema,
};
const CLOSED_SET = /^(state|status)$/;

/** The enum's values under `optional()`, or null when the field takes any string. */
function enumValues(field: z.ZodType): readonly string[] | null {
  const inner =
    field.def.type === "optional" ? (field.def as unknown as { innerType: z.ZodType }).innerType : field;
  return inner.def.type === "enum" ? (inner as unknown as z.ZodEnum).options.map(String) : null;
}

let t: InProcess;
beforeEach(async () => {
  t = await inProcessApp();
});
afterEach(async () => {
  await t.close();
});

describe("list filters", () => {
  const closed = Object.entries(LIST_QUERIES).flatMap(([route, schema]) =>
    Object.entries(schema.shape)
      .filter(([name]) => CLOSED_SET.test(name))
      .map(([name, field]) => ({ route, name, values: enumValues(field as z.ZodType) })),
  );

  it("a state or status filter is an enum on every list route", () => {
    expect(closed.map((f) => f.route)).toEqual(["/v1/jobs", "/v1/effects", "/v1/intents", "/v1/runs"]);
    for (const filter of closed) expect(filter.values, `${filter.route} ?${filter.name}`).not.toBeNull();
  });

  // /v1/runs needs a run service this app is made without: test/runs/worker-http.test.ts sends it `?status=bogus`.
  it.each(closed.filter((f) => f.route !== "/v1/runs"))(
    "$route?$name=done is a 400 naming the field",
    async ({ route, name, values }) => {
      const response = await t.app.request(`${route}?${name}=done`);
      expect(response.status).toBe(400);
      expect(response.headers.get("content-type")).toBe("application/problem+json");
      expect(await response.json()).toMatchObject({ code: "invalid-request", field: name });
      const good = await t.app.request(`${route}?${name}=${values?.[0]}`);
      expect(good.status).toBe(200);
    },
  );
});
