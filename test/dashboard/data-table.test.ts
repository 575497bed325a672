import { describe, expect, it } from "vitest";
import type { Job } from "../../src/core/model.js";
import { JobTable } from "../../src/dashboard/components.js";
import { DataTable } from "../../src/dashboard/data-table.js";

const NOW = Date.UTC(2026, 0, 1, 12, 0);
const job: Job = {
  provider: "openai",
  id: "batch_<1>",
  kind: "batch",
  state: "succeeded",
  settledBy: "webhook",
  submittedAt: NOW - 60_000,
  updatedAt: NOW - 1_000,
} as Job;

/** Each row's cells as [data-label, text] pairs, and the headings. */
function parse(html: string) {
  const heads = [...html.matchAll(/<th[^>]*>([^<]*)<\/th>/g)].map((m) => m[1]);
  const rows = [...html.matchAll(/<tr(?: [^>]*)?>(.*?)<\/tr>/g)]
    .slice(1)
    .map((row) =>
      [...(row[1] ?? "").matchAll(/<td([^>]*)>/g)].map(
        (cell) => /data-label="([^"]*)"/.exec(cell[1] ?? "")?.[1],
      ),
    );
  return { heads, rows };
}

describe("the dashboard's table", () => {
  it("a job without flags has an empty flags cell (a phone's card hides it, label and all)", () => {
    const html = String(JobTable({ jobs: [job], now: NOW, empty: "none" }));
    expect(html).toContain('<td data-label="flags"></td>');
    const flagged = String(
      JobTable({ jobs: [{ ...job, stuck: true, conflict: true } as Job], now: NOW, empty: "none" }),
    );
    expect(flagged).toMatch(
      /<td data-label="flags"><span class="badge stuck">stuck<\/span> <span class="badge flag">conflict<\/span><\/td>/,
    );
  });

  it("labels every cell with its column's heading server-side, so phone-width row cards read without a script", () => {
    for (const compact of [false, true]) {
      const { heads, rows } = parse(String(JobTable({ jobs: [job, job], now: NOW, empty: "none", compact })));
      expect(heads.length).toBeGreaterThan(3);
      expect(rows).toHaveLength(2);
      for (const labels of rows) expect(labels).toEqual(heads);
    }
  });

  it("escapes what a row holds and gives each row its own attributes", () => {
    const html = String(JobTable({ jobs: [job], now: NOW, empty: "none" }));
    expect(html).toContain('data-job="openai/batch_&lt;1&gt;"');
    expect(html).toContain('data-state="succeeded"');
    expect(html).not.toContain("batch_<1>");
  });

  it("shows the empty text instead of an empty table, and an unlabelled cell for a heading-less column", () => {
    const columns = [
      { head: "n", num: true, cell: (n: number) => n },
      { head: "", cell: () => "x" },
    ];
    expect(String(DataTable({ rows: [], columns, empty: "nothing yet" }))).toBe(
      '<p class="muted">nothing yet</p>',
    );
    const html = String(DataTable({ rows: [7], columns, empty: "" }));
    expect(html).toContain('<td class="num" data-label="n">7</td>');
    expect(html).toContain("<td>x</td>");
  });
});
