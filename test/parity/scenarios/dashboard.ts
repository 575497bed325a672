import { expect } from "vitest";
import type { Scenario } from "../scenario.js";

const PAGES = ["/", "/jobs", "/effects", "/runs", "/parked", "/intents", "/config", "/jobs/reg-adopt/before"];

/** Every dashboard page answers 200 HTML with the API token (after the other scenarios filled the ledger). */
export const dashboard: Scenario = {
  name: "dashboard-pages",
  config: () => ({}),
  async run(running) {
    for (const path of PAGES) {
      const response = await running.fetch(path, { headers: { accept: "text/html" } });
      const html = await response.text();
      expect(response.status, `${path}: ${html.slice(0, 200)}`).toBe(200);
      expect(response.headers.get("content-type"), path).toMatch(/^text\/html/);
    }
    const job = await (
      await running.fetch("/jobs/reg-adopt/before", { headers: { accept: "text/html" } })
    ).text();
    expect(job).toContain("before");
  },
};
