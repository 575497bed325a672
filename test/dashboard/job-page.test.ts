import { describe, expect, it } from "vitest";
import { JobPage } from "../../src/dashboard/job-page.js";
import { makeJob, T0 } from "../helpers/records.js";

const NOW = T0 + 3_600_000;

/** The job page's reconcile line: the number of polls, when the last one asked, the next check. */
function pollsLine(overrides: Parameters<typeof makeJob>[0]): string {
  const story = { job: makeJob(overrides), events: [], moreAfter: null, effects: [], run: null };
  const html = String(JobPage({ story, now: NOW, after: 0 }));
  const line = /<dd id="job-polls">(.*?)<\/dd>/s.exec(html)?.[1];
  if (line === undefined) throw new Error("no reconcile line on the job page");
  return line.replace(/\s+/g, " ").trim();
}

describe("the dashboard's job page", () => {
  it("says how many polls were made, when the last one asked the provider, and when the next is due", () => {
    expect(
      pollsLine({ id: "p", pollAttempts: 3, lastPolledAt: NOW - 120_000, nextCheckAt: NOW + 300_000 }),
    ).toBe("3 polls, last 2 min ago, next in 5 min");
  });

  it("says nothing of a last poll before the first", () => {
    expect(pollsLine({ id: "p", pollAttempts: 0, lastPolledAt: null, nextCheckAt: NOW + 300_000 })).toBe(
      "0 polls, next in 5 min",
    );
  });
});
