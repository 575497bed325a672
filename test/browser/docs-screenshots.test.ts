import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { CLI } from "../http/helpers/service.js";
import { openBrowser, publishScreenshot, screenshot } from "./helpers/chromium.js";

interface ApiJob {
  provider: string;
  id: string;
}
interface ApiEvent {
  source: string;
  reason: string | null;
}

const enabled = process.env.FINALITY_DOCS_SCREENSHOTS === "1";
/** How long the demo runs before the pictures are taken: through the flaky provider's outage and after. */
const RUN_SECONDS = Number(process.env.FINALITY_DOCS_SECONDS ?? 150);

/**
 * Not a test: the README's pictures (docs/images/), taken from `finality demo` after it has run
 * through an outage. `FINALITY_DOCS_SCREENSHOTS=1 npx vitest run test/browser/docs-screenshots.test.ts`
 */
describe.skipIf(!enabled)("README screenshots from `finality demo`", () => {
  it(
    "takes the overview and a job's timeline",
    async () => {
      const child = spawn(
        process.execPath,
        [CLI, "demo", "--port", "0", "--rate", "2", "--down-after", "30", "--down-for", "60"],
        {
          stdio: ["ignore", "pipe", "inherit"],
        },
      );
      const url = await new Promise<string>((resolve) =>
        createInterface({ input: child.stdout }).on("line", (line) => {
          const match = /dashboard\s+(http:\/\/\S+?)\/?$/.exec(line);
          if (match?.[1]) resolve(match[1]);
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, RUN_SECONDS * 1000));
      const browser = await openBrowser();
      try {
        const page = await browser.newPage();
        await page.goto(`${url}/?refresh=0`);
        publishScreenshot(await screenshot(page, "docs-overview"), "dashboard-overview");

        // The job whose story has the most kinds of refused observations, and a reconcile poll.
        const jobs = ((await (await fetch(`${url}/v1/jobs?limit=300`)).json()) as { items: ApiJob[] }).items;
        let best: { job: ApiJob; score: number } | null = null;
        for (const job of jobs) {
          const path = `${url}/v1/jobs/${job.provider}/${encodeURIComponent(job.id)}/events`;
          const events = ((await (await fetch(path)).json()) as { items: ApiEvent[] }).items;
          const score =
            new Set(events.map((e) => e.reason).filter(Boolean)).size * 2 +
            (events.some((e) => e.source === "reconcile") ? 1 : 0);
          if (best === null || score > best.score) best = { job, score };
        }
        expect(best).not.toBeNull();
        await page.goto(
          `${url}/jobs/${best?.job.provider}/${encodeURIComponent(best?.job.id ?? "")}?refresh=0`,
        );
        publishScreenshot(await screenshot(page, "docs-job-timeline"), "dashboard-job-timeline");
      } finally {
        await browser.close();
        child.kill("SIGINT");
      }
    },
    (RUN_SECONDS + 120) * 1000,
  );
});
